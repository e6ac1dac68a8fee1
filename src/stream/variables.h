// Stream variables: templates compiled at load, rendered from one
// session's facts.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "net/client_cert.h"
#include "stream/stream_config.h"

namespace torii::stream {

// What a template may read about a session.
struct Facts {
  sockaddr_storage peer{};
  sockaddr_storage realip_peer{};  // the peer set_real_ip_from replaced; family 0: none
  sockaddr_storage local{};
  uint64_t connection = 0;
  int64_t start_ms = 0;  // the loop's clock when accepted
  int64_t now_ms = 0;
  int status = 200;
  uint64_t bytes_sent = 0;      // to the client
  uint64_t bytes_received = 0;  // from the client
  // One entry per try, joined with ", " as nginx does.
  std::vector<std::string> upstream_addr;
  std::vector<uint64_t> upstream_bytes_sent;
  std::vector<uint64_t> upstream_bytes_received;
  std::vector<int64_t> upstream_connect_ms;  // -1: the try never connected
  std::vector<int64_t> upstream_first_byte_ms;  // from the try's start; -1: nothing came
  std::vector<int64_t> upstream_session_ms;     // the try's start to its end; -1: not ended
  std::vector<std::string> user;              // `set` values by slot
  std::vector<bool> user_set;                 // whether a `set` wrote the slot in this session
  // listen ... proxy_protocol: the header's addresses (none for UNKNOWN).
  bool has_proxy_protocol = false;
  std::string pp_src_addr, pp_dst_addr;
  uint16_t pp_src_port = 0, pp_dst_port = 0;
  // ssl_preread: the ClientHello's facts; unset when preread was off or
  // the bytes were not a ClientHello (nginx's "not found").
  bool has_preread = false;
  std::string preread_server_name, preread_protocol, preread_alpn;
  // listen ... ssl: the finished handshake's facts.
  uint8_t limit_conn_status = 0;  // 0: limit_conn did not decide; see stream/limit_conn
  bool udp = false;  // a `listen ... udp` session: $protocol is UDP
  bool tls = false;
  std::string ssl_protocol, ssl_cipher, ssl_server_name, ssl_alpn_protocol;
  std::string ssl_session_id, ssl_curve, ssl_curves;  // hex; OpenSSL's group names
  std::string ssl_ciphers;                             // the client's suites, OpenSSL's names
  bool ssl_session_reused = false;
  std::shared_ptr<const net::ClientCertInfo> client_cert;  // ssl_verify_client's facts; null: not asked
  // The block's maps (Var::map_ reads them); null outside a session.
  const std::vector<std::shared_ptr<const Map>>* maps = nullptr;
  const std::vector<std::shared_ptr<const SplitClients>>* splits = nullptr;  // split_clients blocks
  const std::vector<std::shared_ptr<const Geo>>* geos = nullptr;              // geo blocks
  // The block's geoip databases (Var::geoip_ reads them); may be null.
  const config::GeoIpConfig* geoip = nullptr;
  const std::vector<std::shared_ptr<const Geoip2>>* geoip2 = nullptr;  // geoip2 {} variables
};

// The names `set` (slots) and `map` (places in StreamConfig::maps) define
// while a stream block compiles.
class VariableNames {
 public:
  uint32_t define(std::string_view name);
  bool find(std::string_view name, uint32_t& slot) const;
  const std::vector<std::string>& names() const { return names_; }
  uint32_t define_map(std::string_view name);
  bool find_map(std::string_view name, uint32_t& index) const;
  size_t map_count() const { return maps_.size(); }
  uint32_t define_split(std::string_view name);
  bool find_split(std::string_view name, uint32_t& index) const;
  size_t split_count() const { return splits_.size(); }
  uint32_t define_geo(std::string_view name);
  bool find_geo(std::string_view name, uint32_t& index) const;
  size_t geo_count() const { return geos_.size(); }
  uint32_t define_geoip2(std::string_view name);
  bool find_geoip2(std::string_view name, uint32_t& index) const;
  size_t geoip2_count() const { return geoip2_.size(); }

 private:
  std::vector<std::string> names_;
  std::vector<std::string> maps_;
  std::vector<std::string> splits_;
  std::vector<std::string> geos_;
  std::vector<std::string> geoip2_;
};

// One of the module variables (not `set` or `map`): a map may not take its name.
bool is_builtin_variable(std::string_view name);

// "$name", "${name}" and literals; an unknown name is nginx's
// `unknown "name" variable`. $1..$9 are a regex's groups; `groups` names
// the (?<name>) groups of the map regex whose value this is.
using NamedGroups = std::vector<std::pair<std::string, int>>;
Result<Template> compile_template(std::string_view text, const VariableNames& names,
                                  const NamedGroups* groups = nullptr);

// Appends the variable's value; false when it has none (logs print "-").
bool render_variable(const TemplatePart& p, const Facts& f, std::string& out);
void render(const Template& t, const Facts& f, std::string& out);

}  // namespace torii::stream
