// autoindex, autoindex_exact_size, autoindex_format, autoindex_localtime
// (nginx's autoindex module), with nginx's defaults.
#pragma once

#include <cstdint>

namespace torii::config {

struct AutoindexConfig {
  bool enabled = false;
  bool exact_size = true;
  enum class Format : uint8_t { html, json, xml, jsonp };
  Format format = Format::html;
  bool localtime = false;
};

}  // namespace torii::config
