// more_set_headers, more_clear_headers, more_set_input_headers,
// more_clear_input_headers: the headers-more module's rules (Debian's
// libnginx-mod-http-headers-more-filter), set or clear any response or
// request field, builtin ones (Server, Date, Content-Type) included, with
// optional conditions on the status and the content type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/template.h"

namespace torii::config {

struct HeadersMoreField {
  std::string name;     // without a trailing '*'
  bool wildcard = false;  // "X-Hidden-*": every field whose name starts so
  bool clear = false;     // no value: the field is removed
  Template value;
};

struct HeadersMoreRule {
  bool input = false;         // more_*_input_headers: the request's fields
  bool append = false;        // -a: added beside fields of the same name
  bool replace_only = false;  // -r: set only where the request has the field
  std::vector<int> statuses;        // -s; empty: any status
  std::vector<std::string> types;   // -t; empty: any content type
  std::vector<HeadersMoreField> fields;
};

// Every rule that applies to a block: the enclosing blocks' first, then
// its own, in the order written (all run, unlike add_header's).
struct HeadersMoreConfig {
  std::vector<HeadersMoreRule> rules;
  bool has_output = false;
  bool has_input = false;
};

}  // namespace torii::config
