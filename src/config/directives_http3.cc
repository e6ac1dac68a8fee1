// The http3 and quic modules' directives, with nginx's names, contexts and
// defaults, plus torii's own http3_alt_svc.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "config/directives.h"

namespace torii::config {

namespace {

constexpr uint16_t kHS = kHttp | kServer;

Error bad_value(const Node& n, std::string_view v) {
  return node_error(n, "invalid value \"" + std::string(v) + "\" in \"" + n.name + "\" directive");
}

Status set_http3(Compiler&, Scope& s, const Node& n) {
  auto& h3 = s.server->http3_settings;
  h3.enabled = n.args[0] == "on";
  h3.explicit_on = h3.enabled;
  return Ok{};
}

template <bool Http3Settings::*F>
Status set_flag(Compiler&, Scope& s, const Node& n) {
  s.server->http3_settings.*F = n.args[0] == "on";
  return Ok{};
}

// The reuseport eBPF program that routes short-header datagrams to the
// worker owning their connection (http3/bpf_steering).
Status set_bpf(Compiler& c, Scope&, const Node& n) {
  c.cfg().quic_bpf = n.args[0] == "on";
  return Ok{};
}

Status set_max_streams(Compiler&, Scope& s, const Node& n) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v) || v > (1ull << 60)) return bad_value(n, n.args[0]);
  s.server->http3_settings.max_concurrent_streams = static_cast<uint32_t>(std::min<uint64_t>(v, 0xffffffff));
  return Ok{};
}

Status set_stream_buffer(Compiler&, Scope& s, const Node& n) {
  int64_t v = 0;
  // nginx caps it below 2^62 (a QUIC varint); a zero window would stall every stream.
  if (!parse_size(n.args[0], v) || v <= 0 || v > (int64_t(1) << 40)) return bad_value(n, n.args[0]);
  s.server->http3_settings.stream_buffer_size = static_cast<size_t>(v);
  return Ok{};
}

Status set_cid_limit(Compiler&, Scope& s, const Node& n) {
  uint64_t v = 0;
  // RFC 9000 18.2: at least 2.
  if (!parse_number(n.args[0], v) || v < 2 || v > 64) return bad_value(n, n.args[0]);
  s.server->http3_settings.active_connection_id_limit = static_cast<uint32_t>(v);
  return Ok{};
}

// The key file's bytes seed the Retry and stateless-reset keys, so every
// worker and every machine with the same file answers the same way.
Status set_host_key(Compiler& c, Scope& s, const Node& n) {
  const std::string path = c.full_path(n.args[0]);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return node_error(n, "open() \"" + path + "\" failed (" + std::to_string(err) + ": " + strerror(err) + ")");
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  std::string key = bytes.str();
  if (key.empty()) return node_error(n, "\"" + path + "\" is empty in \"quic_host_key\" directive");
  s.server->http3_settings.host_key = std::move(key);
  return Ok{};
}

constexpr DirectiveSpec kHttp3Directives[] = {
    {"http3", kHS, kFlag, true, false, kMain, &set_http3},
    {"http3_hq", kHS, kFlag, true, false, kMain, &set_flag<&Http3Settings::hq>},
    {"http3_max_concurrent_streams", kHS, kArgs1, true, false, kMain, &set_max_streams},
    {"http3_stream_buffer_size", kHS, kArgs1, true, false, kMain, &set_stream_buffer},
    {"http3_alt_svc", kHS, kFlag, true, false, kMain, &set_flag<&Http3Settings::alt_svc>},
    {"quic_retry", kHS, kFlag, true, false, kMain, &set_flag<&Http3Settings::retry>},
    {"quic_gso", kHS, kFlag, true, false, kMain, &set_flag<&Http3Settings::gso>},
    {"quic_host_key", kHS, kArgs1, true, false, kMain, &set_host_key},
    {"quic_active_connection_id_limit", kHS, kArgs1, true, false, kMain, &set_cid_limit},
    {"quic_bpf", kMain, kFlag, true, false, kMain, &set_bpf},
};

}  // namespace

std::span<const DirectiveSpec> http3_directives() { return kHttp3Directives; }

}  // namespace torii::config
