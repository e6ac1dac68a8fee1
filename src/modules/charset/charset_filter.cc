#include "modules/charset/charset_filter.h"

#include <strings.h>

#include "http/response.h"

namespace torii::charset {

namespace {

bool listed(std::string_view mime, const std::vector<std::string>& types) {
  if (mime.size() == 9 && strncasecmp(mime.data(), "text/html", 9) == 0) return true;
  for (const auto& t : types) {
    if (t == "*") return true;
    if (t.size() == mime.size() && strncasecmp(t.data(), mime.data(), mime.size()) == 0) return true;
  }
  return false;
}

bool has_charset(std::string_view type) {
  for (size_t i = type.find(';'); i != std::string_view::npos; i = type.find(';', i + 1)) {
    std::string_view rest = type.substr(i + 1);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (rest.size() >= 8 && strncasecmp(rest.data(), "charset=", 8) == 0) return true;
  }
  return false;
}

}  // namespace

const std::vector<std::string>& default_types() {
  static const std::vector<std::string> types{"text/html",          "text/xml",
                                              "text/plain",         "text/vnd.wap.wml",
                                              "application/javascript", "application/rss+xml"};
  return types;
}

void apply(const std::string& charset, const std::vector<std::string>& types, http::ResponseHead& head) {
  for (auto& [name, value] : head.headers) {
    if (strcasecmp(name.c_str(), "Content-Type") != 0) continue;
    std::string_view v = value;
    std::string_view mime = v.substr(0, v.find(';'));
    while (!mime.empty() && mime.back() == ' ') mime.remove_suffix(1);
    if (!listed(mime, types) || has_charset(v)) return;
    value += "; charset=";
    value += charset;
    return;
  }
}

bool apply_override(std::string_view charset, const std::vector<std::string>& known, int status,
                    http::ResponseHead& head) {
  for (auto& [name, value] : head.headers) {
    if (strcasecmp(name.c_str(), "Content-Type") != 0) continue;
    bool is_known = false;
    for (const auto& k : known)
      is_known = is_known || (k.size() == charset.size() && strncasecmp(k.data(), charset.data(), k.size()) == 0);
    if (!is_known) return false;
    if (has_charset(value) || status == 301 || status == 302) return true;
    value += "; charset=";
    value += charset;
    return true;
  }
  return true;  // no Content-Type: nothing to say a charset of
}

}  // namespace torii::charset
