// Request methods as a small enum; anything unknown keeps its text.
#pragma once

#include <cstdint>
#include <string_view>

namespace torii::http {

enum class Method : uint8_t {
  unknown,
  get,
  head,
  post,
  put,
  del,
  options,
  trace,
  connect,
  patch,
  mkcol,
  copy,
  move,
  propfind,
  proppatch,
  lock,
  unlock,
};

// Exact, case-sensitive match (methods are case-sensitive, RFC 9110 9.1).
Method parse_method(std::string_view name);
std::string_view method_name(Method m);

// Safe and idempotent methods (RFC 9110 9.2), used by retries and limit_except.
bool is_idempotent(Method m);

}  // namespace torii::http
