#include "http/request.h"

#include "core/ascii.h"

namespace torii::http {

using core::iequals;

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
