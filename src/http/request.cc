#include "http/request.h"

namespace torii::http {

namespace {

inline unsigned char lower(unsigned char c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(static_cast<unsigned char>(a[i])) != lower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

}  // namespace

const Header* RequestHead::find(std::string_view name) const {
  // Two tokens compare as integers; a name compare is needed only when one
  // side is not a well-known name (or a hand-built head left tokens unset).
  const HeaderToken t = lookup_header_token(name);
  for (const auto& h : headers) {
    if (t != HeaderToken::none && h.token != HeaderToken::none) {
      if (h.token == t) return &h;
    } else if (iequals(h.name, name)) {
      return &h;
    }
  }
  return nullptr;
}

}  // namespace torii::http
