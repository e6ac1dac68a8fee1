// Small core and module directives with nginx's meaning, each a line or
// two: settings that change a detail of a response or of a connection,
// and the tuning knobs whose job torii's design already does (accepted,
// with a notice where a value asks for something that does not happen).
#include <strings.h>

#include "config/directives.h"
#include "core/quote.h"
#include "modules/charset/charset_filter.h"

namespace torii::config {

namespace {

template <bool LocationSettings::*F>
Status set_flag(Compiler&, Scope& s, const Node& n) {
  s.settings->*F = n.args[0] == "on";
  return Ok{};
}

// ---- ngx_http_charset_module (source_charset, override_charset, charset_map:
// directives_charset.cc) ------------------------------------------------------

// A charset name the config mentions, once (nginx's charset list).
void note_charset(Compiler& c, const std::string& name) {
  auto& names = c.cfg().charsets;
  for (const auto& known : names)
    if (strcasecmp(known.c_str(), name.c_str()) == 0) return;
  names.push_back(name);
}

Status set_charset(Compiler& c, Scope& s, const Node& n) {
  s.settings->charset = n.args[0] == "off" ? std::string() : n.args[0];
  s.settings->charset_template = Template{};
  if (n.args[0].find('$') != std::string::npos) {  // the charset docs' `charset $charset;`
    auto t = compile_template(n.args[0]);
    if (!t) return node_error(n, t.error());
    s.settings->charset_template = std::move(*t);
  } else if (n.args[0] != "off") {
    note_charset(c, n.args[0]);
  }
  check_charset_pair_later(c, s, n);
  return Ok{};
}

Status set_charset_types(Compiler&, Scope& s, const Node& n) {
  std::vector<std::string> types;
  for (const auto& a : n.args) types.push_back(a);
  s.settings->charset_types = std::make_shared<const std::vector<std::string>>(std::move(types));
  return Ok{};
}

// ---- accepted: torii's model already does their job ---------------------------

Status accept_flag(Compiler&, Scope&, const Node&) { return Ok{}; }

Status accept_time(Compiler&, Scope&, const Node& n) {
  int64_t ms = 0;
  if (!parse_time_ms(n.args[0], ms)) return invalid_value(n, n.args[0]);
  return Ok{};
}

// The bound on a graceful stop (QUIT, or `-s quit`). A reload keeps every
// connection in the same workers, each on the config it started with, so
// unlike nginx's old workers nothing there needs ending.
Status set_worker_shutdown_timeout(Compiler& c, Scope&, const Node& n) {
  int64_t ms = 0;
  if (!parse_time_ms(n.args[0], ms)) return invalid_value(n, n.args[0]);
  c.cfg().worker_shutdown_timeout_ms = ms;
  return Ok{};
}

Status accept_size_or_off(Compiler&, Scope&, const Node& n) {
  int64_t v = 0;
  if (n.args[0] != "off" && !parse_size(n.args[0], v)) return invalid_value(n, n.args[0]);
  return Ok{};
}

Status accept_size(Compiler&, Scope&, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return invalid_value(n, n.args[0]);
  return Ok{};
}

// aio and directio move disk reads off nginx's single-threaded worker; a
// torii worker reads files with sendfile or from the open-file cache and
// the page cache, so they change nothing.
Status accept_aio(Compiler& c, Scope&, const Node& n) {
  const std::string& v = n.args[0];
  if (n.name == "aio" && v != "on" && v != "off" && v != "threads" && !v.starts_with("threads="))
    return invalid_value(n, v);
  if (n.name == "aio_write" && v != "on" && v != "off") return invalid_value(n, v);
  if (v != "off") c.warn(n, q(n.name + " " + v) + " has no effect: torii's workers do not block on file reads");
  return Ok{};
}

Status accept_directio(Compiler& c, Scope& s, const Node& n) {
  if (Status st = accept_size_or_off(c, s, n); !st) return st;
  if (n.args[0] != "off") c.warn(n, "\"directio\" has no effect: files are read through the page cache");
  return Ok{};
}

// accept_mutex serialises accept() among nginx's processes; each torii
// worker has its own SO_REUSEPORT socket, which the kernel balances.
Status accept_accept_mutex(Compiler& c, Scope&, const Node& n) {
  if (n.args[0] == "on") c.warn(n, "\"accept_mutex on\" has no effect: each worker accepts on its own SO_REUSEPORT socket");
  return Ok{};
}

Status accept_notice_on(Compiler& c, Scope&, const Node& n) {
  if (n.args[0] == "on") {
    if (n.name == "log_subrequest") c.warn(n, "\"log_subrequest on\" has no effect: subrequests (SSI includes, mirrors, auth_request) are not written to the access log");
    if (n.name == "msie_refresh") c.warn(n, "\"msie_refresh on\" has no effect: redirects always use Location");
  }
  return Ok{};
}

// slice SIZE (modules/slice): 0 turns it off.
Status set_slice(Compiler&, Scope& s, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return invalid_value(n, n.args[0]);
  s.settings->slice_size = v;
  return Ok{};
}

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

constexpr DirectiveSpec kSmallDirectives[] = {
    {"charset", kHSL | kLocationIf, kArgs1, true, false, kMain, &set_charset},
    {"slice", kHSL, kArgs1, true, false, kMain, &set_slice},
    {"charset_types", kHSL, kArgs1More, true, false, kMain, &set_charset_types},
    {"absolute_redirect", kHSL, kFlag, true, false, kMain, &set_flag<&LocationSettings::absolute_redirect>},
    {"port_in_redirect", kHSL, kFlag, true, false, kMain, &set_flag<&LocationSettings::port_in_redirect>},
    {"server_name_in_redirect", kHSL, kFlag, true, false, kMain,
     &set_flag<&LocationSettings::server_name_in_redirect>},
    {"reset_timedout_connection", kHSL, kFlag, true, false, kMain,
     &set_flag<&LocationSettings::reset_timedout_connection>},
    {"sendfile_max_chunk", kHSL, kArgs1, true, false, kMain, &accept_size},
    {"aio", kHSL, kArgs1, true, false, kMain, &accept_aio},
    {"aio_write", kHSL, kFlag, true, false, kMain, &accept_aio},
    {"directio", kHSL, kArgs1, true, false, kMain, &accept_directio},
    {"directio_alignment", kHSL, kArgs1, true, false, kMain, &accept_size},
    {"accept_mutex", kEvents, kFlag, true, false, kMain, &accept_accept_mutex},
    {"accept_mutex_delay", kEvents, kArgs1, true, false, kMain, &accept_time},
    {"msie_padding", kHSL, kFlag, true, false, kMain, &accept_notice_on},
    {"msie_refresh", kHSL, kFlag, true, false, kMain, &accept_notice_on},
    {"log_subrequest", kHSL, kFlag, true, false, kMain, &accept_notice_on},
    {"worker_shutdown_timeout", kMain, kArgs1, true, false, kMain, &set_worker_shutdown_timeout},
    {"map_hash_max_size", kHttp, kArgs1, true, false, kMain, &accept_size},
    {"map_hash_bucket_size", kHttp, kArgs1, true, false, kMain, &accept_size},
    // Sizes of nginx's per-connection and per-request memory pools; torii's
    // connections and requests hold no such pools.
    {"connection_pool_size", kHttp | kServer, kArgs1, true, false, kMain, &accept_size},
    {"request_pool_size", kHttp | kServer, kArgs1, true, false, kMain, &accept_size},
    // Only kqueue systems watch cached descriptors for changes; on Linux
    // nginx ignores it too.
    {"open_file_cache_events", kHSL, kFlag, true, false, kMain, &accept_flag},
};

}  // namespace

std::span<const DirectiveSpec> small_directives() { return kSmallDirectives; }

}  // namespace torii::config
