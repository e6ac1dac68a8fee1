// One `split_clients STRING $name { PERCENT VALUE; ... }` block (nginx's
// ngx_http_split_clients_module).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/template.h"

namespace torii::config {

struct SplitClientsConfig {
  std::string name;  // the variable, without '$'
  Template key;      // hashed with MurmurHash2
  struct Part {
    // The hash is below this bound (0: the rest, "*" or the line that
    // makes 100%), as nginx computes it from the percentages.
    uint32_t bound = 0;
    std::string value;
  };
  std::vector<Part> parts;  // in the order written
};

}  // namespace torii::config
