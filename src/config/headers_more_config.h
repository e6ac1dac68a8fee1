// more_set_headers, more_clear_headers, more_set_input_headers,
// more_clear_input_headers: the headers-more module's rules (Debian's
// libnginx-mod-http-headers-more-filter), set or clear any response or
// request field, builtin ones (Server, Date, Content-Type) included, with
// optional conditions on the status and the content type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/template.h"
#include "core/ascii.h"

namespace torii::config {

struct HeadersMoreField {
  // Response fields the server keeps apart from the list, decided at load
  // so no response compares names for them.
  enum class Kind : uint8_t { other, content_type, content_length };
  std::string name;     // without a trailing '*'
  bool wildcard = false;  // "X-Hidden-*": every field whose name starts so
  bool clear = false;     // no value: the field is removed
  Kind kind = Kind::other;
  bool names_server = false;  // the name (or wildcard) covers Server
  bool names_date = false;    // ... or Date
  Template value;

  // Whether a field of this name is one the line names.
  bool matches(std::string_view field) const {
    if (!wildcard) return core::iequals(field, name);
    return field.size() >= name.size() && core::iequals(field.substr(0, name.size()), name);
  }
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
