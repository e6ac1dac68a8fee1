// A small strict JSON reader (RFC 8259) for the admin API's request bodies,
// and the string escaping its answers use. Strict: one value and nothing
// after it, no trailing commas, comments or duplicate keys, valid UTF-8,
// at most 32 levels deep. Numbers keep their text; the caller reads them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace torii::admin_api {

struct JsonMember;

struct JsonValue {
  enum class Type { null, boolean, number, string, array, object };
  Type type = Type::null;
  bool boolean = false;
  std::string text;  // a string's value, or a number as written
  std::vector<JsonValue> items;                             // array
  std::vector<JsonMember> members;  // object, in order
};

struct JsonMember {
  std::string name;
  JsonValue value;
};

Result<JsonValue> parse_json(std::string_view text);

// `s` as a JSON string, quotes included.
void append_json_string(std::string& out, std::string_view s);

}  // namespace torii::admin_api
