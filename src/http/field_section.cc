#include "http/field_section.h"

#include "http/field_name_rule.h"

#include <cstdint>

#include "config/config.h"
#include "http/method.h"
#include "http1/parser.h"

namespace torii::http {

FieldSection::Keep FieldSection::add(std::string_view n, std::string_view v, size_t field_limit, size_t list_limit) {
  list_size_ += n.size() + v.size() + 32;  // name, value and 32 bytes of overhead
  if (too_large_) return Keep::nothing;
  // Room for a typical request's fields: one allocation, not one per doubling.
  if (fields_.capacity() == 0) fields_.reserve(12);
  if (n.size() + v.size() > field_limit || list_size_ > list_limit) {
    too_large_ = true;  // answered with 431 once the section ends
    return Keep::nothing;
  }
  if (!n.empty() && n[0] == ':') {
    std::string_view* slot = nullptr;
    if (n == ":method") slot = &method_;
    else if (n == ":path") slot = &path_;
    else if (n == ":authority") slot = &authority_;
    else if (n == ":scheme") slot = &scheme_;
    if (!slot) return Keep::nothing;
    *slot = v;
    return Keep::value;
  }
  if (n == "cookie") {
    // Crumbs travel apart and are joined for HTTP/1 semantics.
    if (!cookie_.empty()) cookie_.append("; ");
    cookie_.append(v);
    return Keep::nothing;
  }
  fields_.push_back(Header{n, v, lookup_header_token(n)});
  return Keep::name_and_value;
}

int FieldSection::build(Exchange& ex, int version, bool had_body, std::string& reason) {
  RequestHead& req = ex.req;
  req.version = version;
  req.keep_alive = true;
  if (too_large_) {
    reason = "client sent too large request headers";
    return 431;
  }
  // Names nginx calls invalid go first, as the HTTP/1 parser drops them.
  if (ex.server && ex.server->ignore_invalid_headers) {
    const bool underscores = ex.server->underscores_in_headers;
    std::erase_if(fields_, [&](const Header& h) { return drops_field_name(h.name, underscores, true); });
  }
  // max_headers counts the regular fields; pseudo-headers and cookie
  // crumbs are not fields of their own (as nginx counts them).
  if (ex.server && fields_.size() > ex.server->max_headers) {
    reason = "client sent too many header lines";
    return 494;
  }
  req.method_name = method_;
  req.method = parse_method(method_);
  int64_t bytes = 0;
  for (const auto& h : fields_) bytes += int64_t(h.name.size() + h.value.size() + 4);
  ex.request_length = bytes + int64_t(method_.size() + path_.size() + authority_.size() + cookie_.size());

  req.headers = std::move(fields_);
  if (!cookie_.empty()) req.headers.push_back(Header{"cookie", cookie_, HeaderToken::cookie});
  const Header* host = req.find(HeaderToken::host);
  if (!authority_.empty()) {
    if (!http1::normalize_host(authority_, req.method == Method::connect, req.host)) {
      reason = "client sent invalid :authority";
      return 400;
    }
    // Handlers and upstreams see a Host field, as HTTP/1.1 carries one.
    if (!host) req.headers.push_back(Header{"host", authority_, HeaderToken::host});
  } else if (host) {
    if (!http1::normalize_host(host->value, false, req.host)) {
      reason = "client sent invalid host header";
      return 400;
    }
  }
  if (req.method == Method::connect) {
    reason = "client sent CONNECT";
    return 405;
  }
  req.target = path_;
  if (path_ == "*") {  // OPTIONS * (RFC 9113 8.3.1, RFC 9114 4.3.1)
    req.raw_path = path_;
    req.path.assign("*");
  } else {
    const size_t q = path_.find('?');
    req.raw_path = path_.substr(0, q);
    req.has_query = q != std::string_view::npos;
    req.query = req.has_query ? path_.substr(q + 1) : std::string_view();
    const bool merge = ex.server->merge_slashes;
    if (req.raw_path.empty() || req.raw_path[0] != '/' || !http1::normalize_path(req.raw_path, merge, req.path)) {
      reason = "client sent invalid :path";
      return 400;
    }
  }
  req.content_length = -1;
  if (const Header* cl = req.find(HeaderToken::content_length)) {
    // The codec checked it is digits and that the DATA adds up to it.
    int64_t v = 0;
    for (char c : cl->value) {
      if (c < '0' || c > '9' || v > (INT64_MAX - 9) / 10) {
        reason = "client sent invalid content-length";
        return 400;
      }
      v = v * 10 + (c - '0');
    }
    req.content_length = v;
  }
  // A body of unknown length is what HTTP/1 calls chunked: handlers stream it.
  req.chunked = had_body && req.content_length < 0;
  return 0;
}

}  // namespace torii::http
