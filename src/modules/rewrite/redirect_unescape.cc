#include "modules/rewrite/redirect_unescape.h"

namespace torii::rewrite {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(c | 0x20);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

}  // namespace

// A redirect's target is unescaped up to its query (NGX_UNESCAPE_REDIRECT),
// so `rewrite ^ $arg_url? redirect` sends the URL the argument carried:
// %XX above '%' and below 0x7f turns back into its byte, the others (line
// breaks, spaces, '%' itself, bytes from 0x7f) stay escaped, and a '?',
// written or decoded, ends the unescaping. Broken escapes lose their '%'
// as nginx's do.
std::string unescape_redirect(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    const char c = in[i];
    if (c == '?') break;
    if (c != '%') {
      out.push_back(c);
      ++i;
      continue;
    }
    if (i + 1 >= in.size()) return out;  // a '%' at the end is dropped
    const int hi = hex_digit(in[i + 1]);
    if (hi < 0) {  // "%" and a non-hex byte: the byte stays
      out.push_back(in[i + 1]);
      i += 2;
      continue;
    }
    if (i + 2 >= in.size()) return out;
    const int lo = hex_digit(in[i + 2]);
    i += 3;
    if (lo < 0) continue;  // "%X" and a non-hex byte: all three go
    const auto decoded = static_cast<unsigned char>(hi << 4 | lo);
    if (decoded == '?') {
      out.push_back('?');
      out.append(in.substr(i));
      return out;
    }
    if (decoded > '%' && decoded < 0x7f) {
      out.push_back(static_cast<char>(decoded));
    } else {
      out.append(in.substr(i - 3, 3));
    }
  }
  out.append(in.substr(i));
  return out;
}

}  // namespace torii::rewrite
