// The http2 module's directives (http2 and http2_*), with nginx's contexts
// and defaults. Per-connection limits live in Server::http2_settings; the
// header-list limit, idle time and requests per connection come from
// large_client_header_buffers, keepalive_timeout and keepalive_requests,
// as in nginx 1.19.7 and later.
#include <string>

#include "config/directives.h"

namespace torii::config {

namespace {

constexpr uint16_t kHS = kHttp | kServer;

Error bad_value(const Node& n, std::string_view v) {
  return node_error(n, "invalid value \"" + std::string(v) + "\" in \"" + n.name + "\" directive");
}

Status set_http2(Compiler&, Scope& s, const Node& n) {
  s.server->http2 = n.args[0] == "on";
  return Ok{};
}

Status set_max_streams(Compiler&, Scope& s, const Node& n) {
  uint64_t v = 0;
  // nghttp2 takes a 31-bit count; 0 would refuse every request.
  if (!parse_number(n.args[0], v) || v == 0 || v > 0x7fffffff) return bad_value(n, n.args[0]);
  s.server->http2_settings.max_concurrent_streams = static_cast<uint32_t>(v);
  return Ok{};
}

// A size within [lo, hi].
template <size_t Http2Settings::*F, int64_t Lo, int64_t Hi>
Status set_size(Compiler&, Scope& s, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v) || v < Lo || v > Hi) return bad_value(n, n.args[0]);
  s.server->http2_settings.*F = static_cast<size_t>(v);
  return Ok{};
}

// Directives nginx 1.19.7 made obsolete: accepted with nginx's warning.
Status obsolete(Compiler& c, Scope&, const Node& n) {
  std::string instead;
  if (n.name == "http2_idle_timeout") instead = "keepalive_timeout";
  else if (n.name == "http2_max_requests") instead = "keepalive_requests";
  else if (n.name == "http2_recv_timeout") instead = "client_header_timeout";
  else instead = "large_client_header_buffers";
  c.warn(n, "the \"" + n.name + "\" directive is obsolete, use the \"" + instead + "\" directive instead");
  return Ok{};
}

// Sizes of nginx's own HTTP/2 structures (a memory pool, the stream index
// hash): checked as nginx checks them; torii's sessions have neither.
Status accept_pool_size(Compiler&, Scope&, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v) || v <= 0) return node_error(n, "invalid value \"" + n.args[0] + "\"");
  return Ok{};
}

Status accept_streams_index_size(Compiler&, Scope&, const Node& n) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v) || v == 0 || (v & (v - 1)) != 0)
    return node_error(n, "\"" + n.name + "\" directive must be a power of two");
  return Ok{};
}

// Server push was removed from browsers; nginx 1.25 removed it too.
Status push_off(Compiler& c, Scope&, const Node& n) {
  if (n.args[0] != "off") c.warn(n, "\"" + n.name + "\" is ignored: HTTP/2 server push is not supported");
  return Ok{};
}

// http2_max_concurrent_pushes N: 0 is what torii does; more asks for push.
Status push_off_count(Compiler& c, Scope&, const Node& n) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v)) return node_error(n, "\"" + n.name + "\" directive invalid number");
  if (v != 0) c.warn(n, "\"" + n.name + "\" is ignored: HTTP/2 server push is not supported");
  return Ok{};
}

constexpr int64_t kMaxFrame = (1 << 24) - 1;   // largest DATA frame HTTP/2 allows
constexpr int64_t kMaxWindow = 0x7fffffff;     // largest flow-control window

constexpr DirectiveSpec kHttp2Directives[] = {
    {"http2", kHS, kFlag, true, false, kMain, &set_http2},
    {"http2_max_concurrent_streams", kHS, kArgs1, true, false, kMain, &set_max_streams},
    {"http2_chunk_size", kHS, kArgs1, true, false, kMain,
     &set_size<&Http2Settings::chunk_size, 1, kMaxFrame>},
    {"http2_recv_buffer_size", kHttp, kArgs1, true, false, kMain,
     &set_size<&Http2Settings::recv_buffer_size, 2 * 16384, 1 << 30>},
    {"http2_body_preread_size", kHS, kArgs1, true, false, kMain,
     &set_size<&Http2Settings::body_preread_size, 0, kMaxWindow>},
    {"http2_idle_timeout", kHS, kArgs1, true, false, kMain, &obsolete},
    {"http2_max_requests", kHS, kArgs1, true, false, kMain, &obsolete},
    {"http2_recv_timeout", kHS, kArgs1, true, false, kMain, &obsolete},
    {"http2_max_field_size", kHS, kArgs1, true, false, kMain, &obsolete},
    {"http2_max_header_size", kHS, kArgs1, true, false, kMain, &obsolete},
    {"http2_push", kHS | kLocation, kArgs1, false, false, kMain, &push_off},
    {"http2_push_preload", kHS | kLocation, kFlag, true, false, kMain, &push_off},
    {"http2_max_concurrent_pushes", kHS, kArgs1, true, false, kMain, &push_off_count},
    {"http2_pool_size", kHS, kArgs1, true, false, kMain, &accept_pool_size},
    {"http2_streams_index_size", kHS, kArgs1, true, false, kMain, &accept_streams_index_size},
};

}  // namespace

std::span<const DirectiveSpec> http2_directives() { return kHttp2Directives; }

}  // namespace torii::config
