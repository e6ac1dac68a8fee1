// A map {} block: a variable whose value is looked up from another
// template's value ("map $http_upgrade $connection_upgrade { ... }"). The
// table and its lookup are shared with stream's map (config/map_table.h).
#pragma once

#include <string>

#include "config/map_table.h"
#include "config/template.h"

namespace torii::config {

struct MapConfig : MapTable<Template> {
  std::string name;  // the defined variable, without '$'
  Template source;
};

}  // namespace torii::config
