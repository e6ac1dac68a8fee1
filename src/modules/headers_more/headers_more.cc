#include "modules/headers_more/headers_more.h"

#include <charconv>
#include <string>
#include <string_view>

#include "config/config.h"
#include "config/headers_more_config.h"
#include "core/ascii.h"
#include "http/exchange.h"
#include "http/field_bytes.h"
#include "http/response.h"
#include "http/variables.h"
#include "http1/parser.h"
#include "modules/charset/charset_filter.h"

namespace torii::headers_more {

namespace {

using config::HeadersMoreField;
using config::HeadersMoreRule;

// The response's type without its parameters ("text/html; charset=utf-8"
// is "text/html"), compared as written, as the module does.
bool type_listed(const std::vector<std::string>& types, std::string_view type) {
  type = type.substr(0, type.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
  for (const std::string& t : types)
    if (t == type) return true;
  return false;
}

bool status_listed(const std::vector<int>& statuses, int status) {
  for (int s : statuses)
    if (s == status) return true;
  return false;
}

std::string render_value(const HeadersMoreField& f, const http::Exchange& ex) {
  std::string value;
  if (!f.clear) {
    http::render(f.value, ex, value);
    http::line_breaks_to_spaces(value);
  }
  return value;
}

// The first field of the name takes the value and later ones go; an empty
// value removes them all; none found: the field is added (not for a
// wildcard, which names no one field).
void set_response_field(http::ResponseHead& head, const HeadersMoreField& f, std::string value) {
  bool matched = false;
  auto& fields = head.headers;
  for (size_t i = 0; i < fields.size();) {
    if (!f.matches(fields[i].first)) {
      ++i;
      continue;
    }
    if (value.empty() || matched) {
      fields.erase(fields.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    fields[i].second = value;
    matched = true;
    ++i;
  }
  if (!matched && !value.empty() && !f.wildcard) head.add(f.name, std::move(value));
}

// A new Content-Type without a charset keeps the one the response had, as
// the module leaves nginx's charset apart from the type it replaces.
void keep_charset(const http::ResponseHead& head, std::string& value) {
  if (!charset::charset_param(value).empty()) return;
  const std::string* old = head.find("Content-Type");
  if (!old) return;
  const std::string_view charset = charset::charset_param(*old);
  if (!charset.empty()) value.append("; charset=").append(charset);
}

void apply_response_field(const HeadersMoreRule& rule, const HeadersMoreField& f, std::string value,
                          http::ResponseHead& head, OwnFields& own) {
  if (rule.append) {
    if (!value.empty()) head.add(f.name, std::move(value));
    return;
  }
  if (f.kind == HeadersMoreField::Kind::content_length) {
    // The length is the response's framing: it is set as a number or
    // cleared (the body then goes chunked), never written as text here.
    int64_t length = -1;
    if (!value.empty()) {
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
      if (ec != std::errc() || end != value.data() + value.size() || length < 0) return;
    }
    head.content_length = length;
    head.remove("Content-Length");
    return;
  }
  if (f.kind == HeadersMoreField::Kind::content_type && !value.empty()) keep_charset(head, value);
  if (f.names_server) own.server = false;
  if (f.names_date) own.date = false;
  set_response_field(head, f, std::move(value));
}

}  // namespace

void apply_output(const http::Exchange& ex, http::ResponseHead& head, OwnFields& own) {
  for (const HeadersMoreRule& rule : ex.settings().headers_more->rules) {
    if (rule.input) continue;
    if (!rule.statuses.empty() && !status_listed(rule.statuses, head.status)) continue;
    if (!rule.types.empty()) {
      const std::string* type = head.find("Content-Type");
      if (!type || !type_listed(rule.types, *type)) continue;
    }
    for (const HeadersMoreField& f : rule.fields) apply_response_field(rule, f, render_value(f, ex), head, own);
  }
}

void apply_input(http::Exchange& ex) {
  auto& fields = ex.req.headers;
  for (const HeadersMoreRule& rule : ex.settings().headers_more->rules) {
    if (!rule.input) continue;
    if (!rule.types.empty()) {
      // The request's Content-Type compared whole, as the module does.
      const http::Header* type = ex.req.find(http::HeaderToken::content_type);
      bool listed = false;
      for (const std::string& t : rule.types) listed = listed || (type && type->value == t);
      if (!listed) continue;
    }
    for (const HeadersMoreField& f : rule.fields) {
      std::string rendered = render_value(f, ex);
      // The request's fields are views: a new value lives as long as the exchange.
      std::string_view value = rendered.empty() ? std::string_view() : ex.kept_field_values.emplace_back(std::move(rendered));
      bool matched = false, found = false;
      for (size_t i = 0; i < fields.size();) {
        // A wildcard names fields to clear only.
        if (!f.matches(fields[i].name) || (f.wildcard && !value.empty())) {
          ++i;
          continue;
        }
        found = true;
        if (value.empty() || matched) {
          fields.erase(fields.begin() + static_cast<std::ptrdiff_t>(i));
          continue;
        }
        fields[i].value = value;
        matched = true;
        ++i;
      }
      const bool added = !matched && !value.empty() && !rule.replace_only && !f.wildcard;
      if (added) fields.push_back(http::Header{f.name, value, http::lookup_header_token(f.name)});
      // $host follows a new Host, as nginx's own field does.
      if (!f.wildcard && (found || added) && core::iequals(f.name, "Host")) {
        std::string host;
        if (value.empty()) {
          ex.req.host.clear();
        } else if (http1::normalize_host(value, false, host)) {
          ex.req.host = std::move(host);
        }
      }
    }
  }
}

}  // namespace torii::headers_more
