#include "http/header_token.h"

#include <array>
#include <cstddef>
#include <initializer_list>

namespace torii::http {

namespace {

constexpr size_t kCount = static_cast<size_t>(HeaderToken::count_);

// Indexed by token; canonical lower-case spelling.
constexpr std::array<std::string_view, kCount> kNames = {
    "",
    "accept-encoding",
    "authorization",
    "cache-control",
    "connection",
    "content-length",
    "content-type",
    "cookie",
    "date",
    "expect",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "keep-alive",
    "proxy-connection",
    "range",
    "referer",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "x-forwarded-for",
};

constexpr std::array<unsigned char, 256> make_lower() {
  std::array<unsigned char, 256> t{};
  for (int i = 0; i < 256; ++i) t[i] = static_cast<unsigned char>(i >= 'A' && i <= 'Z' ? i + 32 : i);
  return t;
}
constexpr std::array<unsigned char, 256> kLower = make_lower();

// `name` has the length of the token's canonical (lower-case) spelling.
inline bool same(std::string_view name, HeaderToken t) {
  std::string_view canon = kNames[static_cast<size_t>(t)];
  for (size_t i = 0; i < canon.size(); ++i) {
    if (kLower[static_cast<unsigned char>(name[i])] != static_cast<unsigned char>(canon[i])) return false;
  }
  return true;
}

// The candidates all have the length of `name`; the first match wins.
inline HeaderToken pick(std::string_view name, std::initializer_list<HeaderToken> candidates) {
  for (HeaderToken t : candidates)
    if (same(name, t)) return t;
  return HeaderToken::none;
}

}  // namespace

HeaderToken lookup_header_token(std::string_view name) {
  using T = HeaderToken;
  // Length first: most lengths leave one or two candidates, so a name costs
  // at most a few short compares and no hashing.
  switch (name.size()) {
    case 2:
      return pick(name, {T::te});
    case 4:
      // "host" and "date" differ in the first byte.
      return pick(name, {T::host, T::date});
    case 5:
      return pick(name, {T::range});
    case 6:
      return pick(name, {T::cookie, T::expect});
    case 7:
      return pick(name, {T::referer, T::upgrade, T::trailer});
    case 8:
      return pick(name, {T::if_match, T::if_range});
    case 10:
      return pick(name, {T::connection, T::user_agent, T::keep_alive});
    case 12:
      return pick(name, {T::content_type});
    case 13:
      return pick(name, {T::authorization, T::cache_control, T::if_none_match});
    case 14:
      return pick(name, {T::content_length});
    case 15:
      return pick(name, {T::accept_encoding, T::x_forwarded_for});
    case 16:
      return pick(name, {T::proxy_connection});
    case 17:
      return pick(name, {T::if_modified_since, T::transfer_encoding});
    case 19:
      return pick(name, {T::if_unmodified_since});
    default:
      return T::none;
  }
}

uint8_t header_flags(HeaderToken t) {
  switch (t) {
    case HeaderToken::connection:
    case HeaderToken::keep_alive:
    case HeaderToken::proxy_connection:
    case HeaderToken::te:
    case HeaderToken::trailer:
    case HeaderToken::transfer_encoding:
    case HeaderToken::upgrade:
      return kHopByHop;
    default:
      return 0;
  }
}

std::string_view header_token_name(HeaderToken t) {
  size_t i = static_cast<size_t>(t);
  return i < kCount ? kNames[i] : std::string_view();
}

}  // namespace torii::http
