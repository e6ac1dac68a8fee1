#include "cache/variant.h"

#include <cctype>

#include "core/ascii.h"
#include "http/exchange.h"

namespace torii::cache {

namespace {

using core::iequals;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

Md5 variant_of(const http::Exchange& ex, std::string_view vary) {
  std::string text;
  while (!vary.empty()) {
    const size_t comma = vary.find(',');
    const std::string_view name = trim(vary.substr(0, comma));
    vary = comma == std::string_view::npos ? std::string_view{} : vary.substr(comma + 1);
    if (name.empty()) continue;
    for (char c : name) text.push_back(char(std::tolower(static_cast<unsigned char>(c))));
    text += ':';
    bool first = true;
    for (const auto& h : ex.req.headers) {
      if (!iequals(h.name, name)) continue;
      if (!first) text += ',';
      text.append(h.value);
      first = false;
    }
    text += '\n';
  }
  return md5_of(text);
}

Md5 variant_md5(const std::string& key, const Md5& variant) {
  return md5_of(key + "\n" + hex(variant));
}

}  // namespace torii::cache
