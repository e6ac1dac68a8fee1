// libFuzzer target for the QUIC datagram path: the input is a run of
// datagrams (each a 2-byte length, then its bytes, from a peer address the
// input picks), fed to a worker's Endpoint as if recvmmsg had read them.
// They reach everything that parses a datagram before any key exists:
// version and connection-ID decoding, Version Negotiation, Retry and its
// token check (quic_retry is on for one of the two addresses), stateless
// reset, ngtcp2_accept and a new connection's first read, and the routing
// of later datagrams to that connection. Replies go to 127.0.0.1's discard
// port; the worker's deferred work runs after each input.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "config/loader.h"
#include "core/worker.h"
#include "http3/endpoint.h"

namespace {

using namespace torii;

const char* kDir = "/tmp/torii-http3-fuzz";

std::shared_ptr<const config::Config> load_config() {
  const std::string dir = kDir;
  if (access((dir + "/a.pem").c_str(), R_OK) != 0) {
    // A throwaway self-signed certificate, made once per machine.
    const std::string cmd = "mkdir -p " + dir + " && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
                            "-nodes -keyout " + dir + "/a.key -out " + dir + "/a.pem -days 30 -subj /CN=a.test "
                            ">/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) abort();
  }
  const std::string text = "events { worker_connections 64; } http { error_log /dev/null; access_log off; "
                           "ssl_certificate " + dir + "/a.pem; ssl_certificate_key " + dir + "/a.key; "
                           "server { listen 127.0.0.1:1 quic; } "
                           "server { listen 127.0.0.1:2 quic; quic_retry on; } }";
  auto cfg = config::load_from_string(text, dir + "/", "");
  if (!cfg) abort();
  return *cfg;
}

struct Rig {
  std::shared_ptr<const config::Config> config = load_config();
  core::Worker worker{0, config};
  std::unique_ptr<http3::Endpoint> endpoints[2];
  Rig() {
    for (int i = 0; i < 2; ++i) {
      int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      sockaddr_in any{};
      any.sin_family = AF_INET;
      any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      bind(fd, reinterpret_cast<sockaddr*>(&any), sizeof any);
      auto b = std::make_shared<core::ListenBinding>();
      b->config = config;
      b->group = &config->listen_groups[size_t(i)];
      endpoints[i] = std::make_unique<http3::Endpoint>(worker, fd, b);
    }
  }
  // One loop turn: closed connections are destroyed, deferred reads run.
  void turn() {
    worker.loop().defer([this] { worker.loop().stop(); });
    worker.loop().run();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Rig* rig = new Rig();
  sockaddr_storage local{};
  auto& l = reinterpret_cast<sockaddr_in&>(local);
  l.sin_family = AF_INET;
  l.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  uint8_t buf[4096];
  size_t pos = 0;
  while (pos + 3 <= size) {
    const uint8_t flags = data[pos];
    size_t len = (size_t(data[pos + 1]) << 8) | data[pos + 2];
    pos += 3;
    len = std::min({len, size - pos, sizeof buf});
    std::memcpy(buf, data + pos, len);
    pos += len;
    sockaddr_storage peer{};
    auto& p = reinterpret_cast<sockaddr_in&>(peer);
    p.sin_family = AF_INET;
    p.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    p.sin_port = htons(uint16_t(9 + (flags & 0x7)));  // discard port and neighbours: a few "clients"
    http3::Endpoint& e = *rig->endpoints[(flags >> 3) & 1];
    l.sin_port = e.binding()->group->listen.addr.ss_family == AF_INET
                     ? reinterpret_cast<const sockaddr_in&>(e.binding()->group->listen.addr).sin_port
                     : 0;
    e.handle_datagram(buf, len, peer, sizeof(sockaddr_in), local, sizeof(sockaddr_in));
  }
  rig->turn();
  return 0;
}
