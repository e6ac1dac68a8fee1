// The sub module's settings for one block (nginx's ngx_http_sub_module):
// the `sub_filter` pairs, sub_filter_once, sub_filter_last_modified and
// sub_filter_types, merged down http -> server -> location (a block shares
// its parent's object until one of its directives changes it).
#pragma once

#include <string>
#include <vector>

#include "config/compression_config.h"
#include "config/template.h"

namespace torii::config {

struct SubFilterPair {
  Template match;     // lower-case when constant (nginx lowers it at load)
  Template replacement;
};

struct SubFilterConfig {
  std::vector<SubFilterPair> pairs;  // in the order written; empty: no filter
  bool once = true;                  // sub_filter_once
  bool last_modified = false;        // sub_filter_last_modified
  CompressTypes types;               // sub_filter_types: text/html, or "*"
};

}  // namespace torii::config
