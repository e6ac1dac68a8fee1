#include "http/method.h"

#include <array>

namespace torii::http {

namespace {
constexpr std::array<std::string_view, 17> kNames = {
    "",       "GET",  "HEAD",  "POST",     "PUT",       "DELETE", "OPTIONS", "TRACE", "CONNECT",
    "PATCH",  "MKCOL", "COPY", "MOVE",     "PROPFIND",  "PROPPATCH", "LOCK",  "UNLOCK",
};
}  // namespace

Method parse_method(std::string_view name) {
  // GET and POST dominate; check them before the table walk.
  if (name == "GET") return Method::get;
  if (name == "POST") return Method::post;
  for (size_t i = 1; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<Method>(i);
  }
  return Method::unknown;
}

std::string_view method_name(Method m) { return kNames[static_cast<size_t>(m)]; }

bool is_idempotent(Method m) {
  switch (m) {
    case Method::post:
    case Method::patch:
    case Method::lock:
    case Method::connect:
    case Method::unknown:
      return false;
    default:
      return true;
  }
}

}  // namespace torii::http
