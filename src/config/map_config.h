// A map {} block: a variable whose value is looked up from another
// template's value ("map $http_upgrade $connection_upgrade { ... }").
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/regex.h"
#include "config/template.h"

namespace torii::config {

struct MapConfig {
  std::string name;  // the defined variable, without '$'
  Template source;
  struct Entry {
    std::string key;               // exact match (case-sensitive unless hostnames)
    std::shared_ptr<Regex> regex;  // "~re" / "~*re", tried in order after exact keys
    Template value;
  };
  std::vector<Entry> entries;
  Template default_value;  // empty string unless "default" is given
  bool hostnames = false;  // keys compare without case (no wildcards yet)
};

}  // namespace torii::config
