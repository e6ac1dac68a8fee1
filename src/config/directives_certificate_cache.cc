// ssl_certificate_cache, proxy_ssl_certificate_cache,
// grpc_ssl_certificate_cache, uwsgi_ssl_certificate_cache (nginx 1.27.4):
//   off | max=N [inactive=TIME] [valid=TIME]
// with nginx's parameters and wording. The server's applies to
// ssl_certificate with $ssl_server_name (net/certified_key). torii's
// upstream client certificates take no variables, so the upstream forms
// are checked and have nothing to cache.
#include "config/directives.h"
#include "config/ssl_directive_args.h"

namespace torii::config {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

Result<CertificateCache> parse_cache(const Node& n) {
  CertificateCache c;
  bool off = false;
  for (const auto& a : n.args) {
    int64_t ms = 0;
    uint64_t max = 0;
    if (starts_with(a, "max=") && parse_number(std::string_view(a).substr(4), max) && max > 0) {
      c.max = size_t(max);
    } else if (starts_with(a, "inactive=") && parse_time_ms(std::string_view(a).substr(9), ms)) {
      c.inactive_s = ms / 1000;
    } else if (starts_with(a, "valid=") && parse_time_ms(std::string_view(a).substr(6), ms)) {
      c.valid_s = ms / 1000;
    } else if (a == "off") {
      off = true;
    } else {
      return node_error(n, "invalid parameter \"" + a + "\"");
    }
  }
  if (off) return CertificateCache{};
  if (c.max == 0) return node_error(n, "\"" + n.name + "\" must have the \"max\" parameter");
  return c;
}

Status set_server_cache(Compiler&, Scope& s, const Node& n) {
  auto c = parse_cache(n);
  if (!c) return make_error(c.error());
  writable_ssl(s, n).certificate_cache = *c;
  return Ok{};
}

Status check_upstream_cache(Compiler&, Scope&, const Node& n) {
  auto c = parse_cache(n);
  if (!c) return make_error(c.error());
  return Ok{};
}

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

constexpr DirectiveSpec kCertificateCacheDirectives[] = {
    {"ssl_certificate_cache", kHttp | kServer, kArgs1More, true, false, kMain, &set_server_cache},
    {"proxy_ssl_certificate_cache", kHSL, kArgs1More, true, false, kMain, &check_upstream_cache},
    {"grpc_ssl_certificate_cache", kHSL, kArgs1More, true, false, kMain, &check_upstream_cache},
    {"uwsgi_ssl_certificate_cache", kHSL, kArgs1More, true, false, kMain, &check_upstream_cache},
};

}  // namespace

std::span<const DirectiveSpec> certificate_cache_directives() { return kCertificateCacheDirectives; }

}  // namespace torii::config
