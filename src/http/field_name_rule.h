// nginx's rule for request header names it hands on (the same for HTTP/1,
// HTTP/2 and HTTP/3): letters, digits and '-', and '_' where
// underscores_in_headers allows it. Any other name is "invalid": with
// ignore_invalid_headers on (the default) such a field is dropped, off it
// is kept. (Bytes that may not be in a name at all are a 400 before this.)
#pragma once

#include <string_view>

namespace torii::http {

inline bool plain_field_name(std::string_view name, bool allow_underscores) {
  for (char c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                       (c == '_' && allow_underscores);
    if (!plain) return false;
  }
  return true;
}

inline bool drops_field_name(std::string_view name, bool allow_underscores, bool ignore_invalid) {
  return ignore_invalid && !plain_field_name(name, allow_underscores);
}

}  // namespace torii::http
