// Directives that configs copied from nginx carry and that ask torii for
// nothing it does not already do, or for something it cannot do: checked
// with nginx's syntax and wording, then accepted (with a warning where a
// line cannot take effect).
//   load_module FILE      torii cannot load nginx's shared objects (the stream
//                         module's line is accepted silently: stream is built in); a config
//                         (Debian's own nginx.conf) that includes the
//                         modules-enabled/*.conf lines still loads. The
//                         directives those modules bring fail by name.
//   env VAR[=VALUE]       nginx hands its worker processes only TZ and the
//                         variables listed. torii's workers are threads of
//                         one process that runs no other program, so it
//                         clears nothing: the libraries it links read the
//                         environment they were started with (OPENSSL_CONF,
//                         SSL_CERT_FILE...). `env VAR=VALUE` sets VAR when
//                         the config loads; `env VAR` keeps VAR, as it is
//                         kept anyway.
//   open_log_file_cache   caches descriptors of access logs whose path has
//                         variables. torii's access_log paths have none and
//                         every log file stays open from load to reopen, so
//                         the cache has nothing to do.
#include <cstdlib>
#include <cstring>

#include "config/directives.h"

namespace torii::config {

namespace {

Status accept_load_module(Compiler& c, Scope&, const Node& n) {
  // Modules Debian packages apart that torii has built in: their lines ask
  // for nothing.
  static constexpr std::string_view kBuiltIn[] = {"ngx_stream_module.so", "ngx_http_geoip_module.so",
                                                  "ngx_stream_geoip_module.so",
                                                  "ngx_http_geoip2_module.so",
                                                  "ngx_stream_geoip2_module.so",
                                                  "ngx_http_headers_more_filter_module.so",
                                                  "ngx_http_cache_purge_module.so",
                                                  "ngx_http_image_filter_module.so",
                                                  "ngx_http_dav_ext_module.so"};
  std::string_view file = n.args[0];
  if (const size_t slash = file.rfind('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
  for (std::string_view built_in : kBuiltIn)
    if (file == built_in) return Ok{};
  c.warn(n, "\"load_module\" ignored: torii cannot load nginx modules (\"" + c.full_path(n.args[0]) +
                "\"); their directives are refused by name");
  return Ok{};
}

Status set_env(Compiler&, Scope&, const Node& n) {
  const std::string& arg = n.args[0];
  const size_t eq = arg.find('=');
  const std::string name = arg.substr(0, eq);
  // An empty name means nothing to nginx either; VAR alone is kept anyway.
  if (name.empty() || eq == std::string::npos) return Ok{};
  const std::string value = arg.substr(eq + 1);
  // Set only when it changes, so a reload of the same config writes nothing
  // while the workers run.
  const char* now = std::getenv(name.c_str());
  if (now == nullptr || value != now) setenv(name.c_str(), value.c_str(), 1);
  return Ok{};
}

// open_log_file_cache max=N [inactive=time] [min_uses=N] [valid=time] | off
Status accept_open_log_file_cache(Compiler&, Scope&, const Node& n) {
  bool off = false;
  uint64_t max = 0;
  for (const auto& a : n.args) {
    std::string_view v = a;
    uint64_t number = 0;
    int64_t ms = 0;
    bool ok = false;
    if (v.starts_with("max=")) {
      ok = parse_number(v.substr(4), max);
    } else if (v.starts_with("min_uses=")) {
      ok = parse_number(v.substr(9), number);
    } else if (v.starts_with("inactive=")) {
      ok = parse_time_ms(v.substr(9), ms);
    } else if (v.starts_with("valid=")) {
      ok = parse_time_ms(v.substr(6), ms);
    } else if (v == "off") {
      ok = off = true;
    }
    if (!ok) return node_error(n, "invalid \"open_log_file_cache\" parameter \"" + a + "\"");
  }
  if (!off && max == 0) return node_error(n, "\"open_log_file_cache\" must have \"max\" parameter");
  return Ok{};
}

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

constexpr DirectiveSpec kCompatDirectives[] = {
    {"load_module", kMain, kArgs1, false, false, kMain, &accept_load_module},
    {"env", kMain, kArgs1, false, false, kMain, &set_env},
    {"open_log_file_cache", kHSL, kArgs1 | kArgs2 | kArgs3 | kArgs4, true, false, kMain, &accept_open_log_file_cache},
};

}  // namespace

std::span<const DirectiveSpec> nginx_compat_directives() { return kCompatDirectives; }

}  // namespace torii::config
