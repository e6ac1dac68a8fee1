// Interned header names. A codec resolves a name to a token once, so later
// layers test a token or its flags ("drop before proxying") instead of
// comparing strings.
#pragma once

#include <cstdint>
#include <string_view>

namespace torii::http {

enum class HeaderToken : uint8_t {
  none,  // not a well-known name
  accept_encoding,
  authorization,
  cache_control,
  connection,
  content_length,
  content_type,
  cookie,
  date,
  expect,
  host,
  if_match,
  if_modified_since,
  if_none_match,
  if_range,
  if_unmodified_since,
  keep_alive,
  proxy_connection,
  range,
  referer,
  te,
  trailer,
  transfer_encoding,
  upgrade,
  user_agent,
  x_forwarded_for,
  count_,
};

enum HeaderFlag : uint8_t {
  kHopByHop = 1 << 0,  // RFC 9110 7.6.1: never forwarded
};

// Case-insensitive lookup; returns HeaderToken::none for other names.
HeaderToken lookup_header_token(std::string_view name);
uint8_t header_flags(HeaderToken t);
// The canonical lower-case spelling of a token.
std::string_view header_token_name(HeaderToken t);

}  // namespace torii::http
