// Feeds arbitrary bytes to the admin API's JSON reader. What it accepts
// must survive a round trip: written back out and read again, it gives the
// same value (so the reader and the writer agree on every escape).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "modules/admin_api/json.h"

using torii::admin_api::JsonValue;

namespace {

void write(std::string& out, const JsonValue& v) {
  switch (v.type) {
    case JsonValue::Type::null: out += "null"; break;
    case JsonValue::Type::boolean: out += v.boolean ? "true" : "false"; break;
    case JsonValue::Type::number: out += v.text; break;
    case JsonValue::Type::string: torii::admin_api::append_json_string(out, v.text); break;
    case JsonValue::Type::array:
      out += '[';
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i) out += ',';
        write(out, v.items[i]);
      }
      out += ']';
      break;
    case JsonValue::Type::object:
      out += '{';
      for (size_t i = 0; i < v.members.size(); ++i) {
        if (i) out += ',';
        torii::admin_api::append_json_string(out, v.members[i].name);
        out += ':';
        write(out, v.members[i].value);
      }
      out += '}';
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto v = torii::admin_api::parse_json(text);
  if (!v) return 0;
  std::string once;
  write(once, *v);
  auto again = torii::admin_api::parse_json(once);
  if (!again) abort();
  std::string twice;
  write(twice, *again);
  if (once != twice) abort();
  return 0;
}
