// The settings of nginx's ngx_http_ssi_module and ngx_http_addition_module
// for one block, merged down http -> server -> location (a block shares
// its parent's object until one of its directives changes it).
#pragma once

#include <cstdint>
#include <string>

#include "config/compression_config.h"

namespace torii::config {

struct SsiConfig {
  bool on = false;              // ssi
  bool silent_errors = false;   // ssi_silent_errors
  bool last_modified = false;   // ssi_last_modified
  int64_t value_length = 255;   // ssi_value_length
  int64_t min_file_chunk = 1024;  // ssi_min_file_chunk (accepted: bodies are parsed in memory)
  CompressTypes types;          // ssi_types: text/html, or "*"
  // The addition module: URIs whose responses go before and after the
  // body of a 200 of `addition_types`; empty: none.
  std::string before_body;      // add_before_body
  std::string after_body;       // add_after_body
  CompressTypes addition_types;  // addition_types
};

}  // namespace torii::config
