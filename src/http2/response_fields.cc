#include "http2/response_fields.h"

#include <array>
#include <cstdint>
#include <cstring>

#include "core/ascii.h"
#include "http/field_bytes.h"

namespace torii::http2 {

namespace {

using core::iequals;

// Visible ASCII but the colon.
constexpr std::array<bool, 256> kNameByte = [] {
  std::array<bool, 256> t{};
  for (int c = '!'; c < 0x7f; ++c) t[size_t(c)] = c != ':';
  return t;
}();

}  // namespace

bool dropped_in_h2(std::string_view name) {
  return iequals(name, "connection") || iequals(name, "keep-alive") || iequals(name, "proxy-connection") ||
         iequals(name, "transfer-encoding") || iequals(name, "upgrade") || iequals(name, "content-length");
}

bool safe_name(std::string_view s) {
  if (s.empty()) return false;
  bool ok = true;
  for (unsigned char c : s) ok &= kNameByte[c];
  return ok;
}

bool safe_value(std::string_view s) { return http::no_cr_lf_nul(s); }

}  // namespace torii::http2
