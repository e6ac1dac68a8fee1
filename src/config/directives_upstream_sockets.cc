// Socket options of the upstream connection shared by the proxy, FastCGI,
// uwsgi, SCGI and gRPC modules: *_socket_rcvbuf and *_socket_sndbuf (one
// setter for every module, config/upstream_settings), and the two
// *_send_lowat nginx has (proxy, fastcgi), which on Linux it warns about
// and ignores: the system has no settable SO_SNDLOWAT.
#include <climits>

#include "config/upstream_settings.h"

namespace torii::config {

namespace {

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

Error invalid(const Node& n) { return node_error(n, "\"" + n.name + "\" directive invalid value"); }

template <int ProxyConfig::*F>
Status set_socket_buffer(Compiler&, Scope& s, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v) || v > INT_MAX) return invalid(n);
  edit_upstream_settings(s, n.name).*F = static_cast<int>(v);
  return Ok{};
}

Status ignore_send_lowat(Compiler& c, Scope&, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return invalid(n);
  c.warn(n, "\"" + n.name + "\" is not supported, ignored");
  return Ok{};
}

#define SOCKET_BUFFER_ROWS(m)                                                                           \
  {m "_socket_rcvbuf", kHSL, kArgs1, true, false, kMain, &set_socket_buffer<&ProxyConfig::socket_rcvbuf>}, \
  {m "_socket_sndbuf", kHSL, kArgs1, true, false, kMain, &set_socket_buffer<&ProxyConfig::socket_sndbuf>}

constexpr DirectiveSpec kUpstreamSocketDirectives[] = {
    SOCKET_BUFFER_ROWS("proxy"),
    SOCKET_BUFFER_ROWS("fastcgi"),
    SOCKET_BUFFER_ROWS("uwsgi"),
    SOCKET_BUFFER_ROWS("scgi"),
    SOCKET_BUFFER_ROWS("grpc"),
    {"proxy_send_lowat", kHSL, kArgs1, true, false, kMain, &ignore_send_lowat},
    {"fastcgi_send_lowat", kHSL, kArgs1, true, false, kMain, &ignore_send_lowat},
};

#undef SOCKET_BUFFER_ROWS

}  // namespace

std::span<const DirectiveSpec> upstream_socket_directives() { return kUpstreamSocketDirectives; }

}  // namespace torii::config
