#include "http/slash_redirect.h"

#include <cstdio>
#include <cstring>

#include "http/exchange.h"
#include "http/pipeline.h"
#include "http/special_response.h"

namespace torii::http {

void append_escaped_path(std::string& out, std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (const char ch : path) {
    const auto c = static_cast<unsigned char>(ch);
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       std::strchr("-._~/!$&'()*+,;=:@", c) != nullptr;
    if (plain && c != 0) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
}

void append_query(std::string& out, std::string_view query) {
  for (const char ch : query) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7f) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out.append(buf);
    } else {
      out.push_back(ch);
    }
  }
}

std::string slash_redirect_location(const Exchange& ex) {
  std::string location;
  location.reserve(ex.req.path.size() + ex.req.query.size() + 8);
  append_escaped_path(location, ex.req.path);
  location.push_back('/');
  if (ex.req.has_query) {
    location.push_back('?');
    append_query(location, ex.req.query);
  }
  return absolute_location(ex, location);
}

void send_slash_redirect(Exchange& ex) {
  ex.response.add("Location", slash_redirect_location(ex));
  send_error(ex, 301);
}

}  // namespace torii::http
