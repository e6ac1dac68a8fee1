// A worker's UDP socket for one address that answers QUIC (SO_REUSEPORT:
// every worker has its own). Reads datagrams in batches (recvmmsg), routes
// each by its destination connection ID to the connection that owns it,
// and answers the datagrams that belong to no connection statelessly:
// Version Negotiation, Retry, stateless reset, or a new connection for a
// valid Initial. Writes are one sendmsg per batch of packets, with
// UDP_SEGMENT (GSO) when quic_gso is on.
#pragma once

#include <ngtcp2/ngtcp2.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/event_loop.h"
#include "core/result.h"

namespace torii::core {
class Worker;
struct ListenBinding;
}  // namespace torii::core
namespace torii::config {
struct Listen;
}

namespace torii::http3 {

class Connection;

// A datagram one worker's socket received for a connection another worker
// owns, copied for the hand-over.
struct HandedDatagram {
  std::vector<uint8_t> bytes;
  sockaddr_storage peer{}, local{};
  socklen_t peer_len = 0, local_len = 0;
};

// A bound, non-blocking UDP socket for `listen` (SO_REUSEPORT, the local
// address of each datagram reported, so replies leave from it).
Result<int> open_udp_listener(const config::Listen& listen);

// The key for Retry tokens and stateless-reset tokens: quic_host_key's
// bytes, or one random key per process (shared by its workers).
const std::string& static_secret(const std::string& host_key);

struct CidKey {
  uint8_t len = 0;
  uint8_t data[NGTCP2_MAX_CIDLEN] = {};
  CidKey() = default;
  CidKey(const uint8_t* p, size_t n) : len(uint8_t(std::min<size_t>(n, NGTCP2_MAX_CIDLEN))) {
    std::memcpy(data, p, len);
  }
  explicit CidKey(const ngtcp2_cid& c) : CidKey(c.data, c.datalen) {}
  bool operator==(const CidKey& o) const { return len == o.len && std::memcmp(data, o.data, len) == 0; }
};
struct CidHash {
  size_t operator()(const CidKey& k) const {
    // Our IDs are random after the first byte; client-chosen ones are
    // hashed whole, so a client cannot aim many IDs at one bucket cheaply.
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < k.len; ++i) h = (h ^ k.data[i]) * 1099511628211ull;
    return size_t(h);
  }
};

class Endpoint final : public core::IoHandler {
 public:
  Endpoint(core::Worker& worker, int fd, std::shared_ptr<core::ListenBinding> binding);
  ~Endpoint() override;

  bool watch();
  // The worker's name for this socket's address: the same in every worker.
  static std::string key_for(const config::Listen& listen);
  const std::string& address_key() const { return key_; }
  int fd() const { return fd_; }
  // A datagram handed over by another worker: delivered if one of this
  // socket's connections has its ID (true), else left alone (false).
  bool take_handed(HandedDatagram& d);
  void on_io(uint32_t events) override;
  std::shared_ptr<core::ListenBinding>& binding() { return binding_; }
  // Graceful stop or the address left the config: no new connections;
  // those open get GOAWAY and finish. The socket stays until they end.
  void drain();
  size_t connections() const { return connections_.size(); }
  // Feeds one datagram as if it had arrived (the fuzzer's entry point).
  void handle_datagram(uint8_t* data, size_t len, const sockaddr_storage& peer, socklen_t peer_len,
                       const sockaddr_storage& local, socklen_t local_len);

  // ---- for connections ----------------------------------------------------
  // Sends `len` bytes: packets of `segment` bytes (the last may be
  // shorter). Returns the bytes the socket took (less on EAGAIN: the
  // caller keeps the rest and waits for on_writable) or -1 on an error.
  ssize_t send(const ngtcp2_path& path, const uint8_t* data, size_t len, size_t segment);
  void wait_writable(Connection* c);
  // A buffer for one batch of outgoing packets, shared by this worker's connections.
  uint8_t* tx_buffer() { return tx_.data(); }
  size_t tx_capacity() const { return tx_.size(); }
  void add_cid(const ngtcp2_cid& cid, Connection* c);
  void remove_cid(const ngtcp2_cid& cid);
  void release(Connection* c);
  // The connection's handshake completed, or it ended before that.
  void handshake_finished(Connection* c, bool completed);

 private:
  void read_batch();
  void new_connection(const ngtcp2_pkt_hd& hd, uint8_t* data, size_t len, const ngtcp2_path& path,
                      const sockaddr_storage& peer);
  void send_version_negotiation(const ngtcp2_version_cid& vc, const ngtcp2_path& path);
  void send_retry(const ngtcp2_pkt_hd& hd, const ngtcp2_path& path, size_t received);
  void send_stateless_close(const ngtcp2_pkt_hd& hd, const ngtcp2_path& path, uint64_t error);
  void send_stateless_reset(const uint8_t* dcid, size_t dcid_len, const ngtcp2_path& path, size_t received);
  ssize_t send_one(const ngtcp2_path& path, const uint8_t* data, size_t len);
  ssize_t send_each(const ngtcp2_path& path, const uint8_t* data, size_t len, size_t segment);

  core::Worker& worker_;
  int fd_;
  std::shared_ptr<core::ListenBinding> binding_;
  std::string key_;
  bool gso_ = false;
  bool gro_ = false;  // the kernel may hand over several datagrams in one buffer
  size_t slots_ = 0, slot_size_ = 0;  // receive slots per recvmmsg, and their size
  bool draining_ = false;
  // A copy: the config that named the key file may be gone after a
  // reload while this socket and its connections live on.
  std::string secret_;
  std::unordered_map<CidKey, Connection*, CidHash> by_cid_;
  std::unordered_map<Connection*, std::unique_ptr<Connection>> connections_;
  size_t handshakes_ = 0;  // connections whose handshake is in progress
  std::vector<Connection*> blocked_;  // waiting for the socket to take writes
  // Receive slots and the send buffer, allocated once.
  std::vector<uint8_t> rx_;
  std::vector<uint8_t> tx_;
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

}  // namespace torii::http3
