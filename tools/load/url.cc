#include "load/url.h"

#include <charconv>

namespace torii::load {

Result<Url> parse_url(std::string_view text) {
  Url url;
  std::string_view rest;
  if (text.starts_with("http://")) {
    rest = text.substr(7);
  } else if (text.starts_with("https://")) {
    url.tls = true;
    rest = text.substr(8);
  } else {
    return make_error("URL must start with http:// or https://: " + std::string(text));
  }
  size_t slash = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  if (size_t hash = path.find('#'); hash != std::string_view::npos) path = path.substr(0, hash);
  if (authority.empty()) return make_error("URL has no host: " + std::string(text));
  if (authority.find('@') != std::string_view::npos)
    return make_error("URL with user information is not supported: " + std::string(text));

  std::string_view host = authority, port;
  if (authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return make_error("bad IPv6 address in URL: " + std::string(text));
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return make_error("bad authority in URL: " + std::string(text));
      port = after.substr(1);
    }
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return make_error("URL has no host: " + std::string(text));
  url.port = url.tls ? 443 : 80;
  if (!port.empty()) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535)
      return make_error("bad port in URL: " + std::string(text));
    url.port = uint16_t(value);
  }
  for (char c : path) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
      return make_error("URL path must be percent-encoded (no spaces or control characters): " +
                        std::string(text));
  }
  url.host = std::string(host);
  url.authority = std::string(authority);
  url.path = path.empty() ? "/" : (path.front() == '?' ? "/" + std::string(path) : std::string(path));
  return url;
}

}  // namespace torii::load
