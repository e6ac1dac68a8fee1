#include "http3/endpoint.h"

#include <gnutls/crypto.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <mutex>

#include "config/config.h"
#include "core/worker.h"
#include "http3/connection.h"
#include "http3/quic_counters.h"
#include "log/error_log.h"
#include "net/address.h"
#include "net/packet_info.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

namespace torii::http3 {

namespace {

constexpr size_t kSlots = 32;         // datagrams per recvmmsg
constexpr size_t kSlotSize = 4096;    // the largest datagram we take (our max_udp_payload_size)
// With UDP_GRO the kernel hands over a client's burst of equal-sized
// datagrams as one buffer of up to 64 KB (and truncates it if the slot is
// smaller): fewer, larger slots, split here by the segment size it reports.
constexpr size_t kGroSlots = 16;
constexpr size_t kGroSlotSize = 65536;
constexpr size_t kTxSize = 64 * 1024;  // one GSO batch at most
constexpr int kBatchesPerTurn = 8;    // then other sockets and connections get the loop
// Retry tokens are good this long: long enough for a slow round trip,
// short enough that a captured token is of little use (Retry token replay).
constexpr uint64_t kRetryTokenLifetime = 10 * NGTCP2_SECONDS;
// A stateless reset must be smaller than what triggered it, so two
// endpoints cannot bounce resets forever (RFC 9000 10.3.3), and at least
// 21 bytes to look like a short-header packet (RFC 9000 10.3).
constexpr size_t kMinResetTrigger = 42;
// Handshakes in progress on one socket past which new clients must prove
// their address with a Retry first, quic_retry or not: a flood of Initials
// (often from spoofed addresses) then costs one stateless packet each,
// not a connection and a TLS handshake.
constexpr size_t kRetryAboveHandshakes = 256;


uint64_t wall_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count());
}

// The segment size of a GRO buffer, or 0 for a single datagram.
size_t gro_segment(msghdr& msg) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
      int size = 0;
      std::memcpy(&size, CMSG_DATA(c), sizeof size);
      return size > 0 ? size_t(size) : 0;
    }
  }
  return 0;
}


socklen_t sockaddr_size(const sockaddr_storage& a) {
  return a.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

}  // namespace

Result<int> open_udp_listener(const config::Listen& l) {
  int fd = socket(l.addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(std::string("socket() failed: ") + strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  if (l.addr.ss_family == AF_INET6) {
    int v6only = l.ipv6only ? 1 : 0;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
    setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one);
  } else {
    setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
  }
  // Where the kernel has it (Linux 5.0+); read back by the endpoint.
  setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof one);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&l.addr), l.addr_len) != 0) {
    int err = errno;
    close(fd);
    return make_error("bind() to " + l.text + " (udp) failed (" + std::to_string(err) + ": " + strerror(err) + ")");
  }
  return fd;
}

const std::string& static_secret(const std::string& host_key) {
  if (!host_key.empty()) return host_key;
  static std::string random_key;
  static std::once_flag once;
  std::call_once(once, [] {
    random_key.resize(32);
    if (gnutls_rnd(GNUTLS_RND_KEY, random_key.data(), random_key.size()) != 0) {
      TORII_LOG(alert, "gnutls_rnd() failed: QUIC tokens use a weaker key");
      for (auto& c : random_key) c = char(wall_ns() >> 3);
    }
  });
  return random_key;
}

Endpoint::Endpoint(core::Worker& worker, int fd, std::shared_ptr<core::ListenBinding> binding)
    : worker_(worker),
      fd_(fd),
      binding_(std::move(binding)),
      key_(key_for(binding_->group->listen)),
      tx_(kTxSize) {
  int gro = 0;
  socklen_t gro_len = sizeof gro;
  gro_ = fd_ >= 0 && getsockopt(fd_, SOL_UDP, UDP_GRO, &gro, &gro_len) == 0 && gro != 0;
  slots_ = gro_ ? kGroSlots : kSlots;
  slot_size_ = gro_ ? kGroSlotSize : kSlotSize;
  rx_.resize(slots_ * slot_size_);
  const auto& h3 = binding_->group->default_server->http3_settings;
  gso_ = h3.gso;
  secret_ = static_secret(h3.host_key);
}

Endpoint::~Endpoint() {
  connections_.clear();
  if (fd_ >= 0) {
    worker_.loop().remove(fd_);
    close(fd_);
  }
}

std::string Endpoint::key_for(const config::Listen& listen) { return "udp " + listen.text; }

bool Endpoint::take_handed(HandedDatagram& d) {
  if (d.bytes.empty()) return false;
  ngtcp2_version_cid vc;
  if (ngtcp2_pkt_decode_version_cid(&vc, d.bytes.data(), d.bytes.size(), kCidLength) != 0) return false;
  if (by_cid_.find(CidKey(vc.dcid, vc.dcidlen)) == by_cid_.end()) return false;
  handle_datagram(d.bytes.data(), d.bytes.size(), d.peer, d.peer_len, d.local, d.local_len);
  return true;
}

bool Endpoint::watch() { return worker_.loop().add(fd_, this, EPOLLIN | EPOLLOUT); }

void Endpoint::on_io(uint32_t events) {
  if (events & EPOLLOUT) {
    std::vector<Connection*> waiting;
    waiting.swap(blocked_);
    for (Connection* c : waiting)
      if (connections_.count(c) && !c->closed()) c->on_writable();
  }
  if (events & (EPOLLIN | EPOLLERR)) read_batch();
}

void Endpoint::read_batch() {
  mmsghdr msgs[kSlots];
  iovec iov[kSlots];
  sockaddr_storage peers[kSlots];
  alignas(cmsghdr) uint8_t ctrl[kSlots][CMSG_SPACE(sizeof(in6_pktinfo)) + CMSG_SPACE(sizeof(int))];
  const uint16_t port_be = reinterpret_cast<const sockaddr_in&>(binding_->group->listen.addr).sin_port;
  for (int turn = 0; turn < kBatchesPerTurn; ++turn) {
    for (size_t i = 0; i < slots_; ++i) {
      iov[i] = {rx_.data() + i * slot_size_, slot_size_};
      msgs[i].msg_hdr = msghdr{};
      msgs[i].msg_hdr.msg_name = &peers[i];
      msgs[i].msg_hdr.msg_namelen = sizeof peers[i];
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
      msgs[i].msg_hdr.msg_control = ctrl[i];
      msgs[i].msg_hdr.msg_controllen = sizeof ctrl[i];
      msgs[i].msg_len = 0;
    }
    const int n = recvmmsg(fd_, msgs, unsigned(slots_), 0, nullptr);
    if (n <= 0) {
      if (n < 0 && errno != EAGAIN && errno != EINTR)
        TORII_LOG(alert, "recvmmsg() failed (%d: %s)", errno, strerror(errno));
      return;  // empty: the next edge brings more
    }
    for (int i = 0; i < n; ++i) {
      msghdr& m = msgs[i].msg_hdr;
      if (m.msg_flags & MSG_TRUNC) continue;  // larger than we said we take: not a valid QUIC datagram
      sockaddr_storage local{};
      if (!net::datagram_destination(m, local, port_be)) {
        local = binding_->group->listen.addr;
      }
      uint8_t* data = rx_.data() + size_t(i) * slot_size_;
      const size_t len = msgs[i].msg_len;
      const size_t segment = gro_segment(m);
      // Each datagram of a GRO buffer is handled as if read alone (the last may be shorter).
      const size_t step = segment > 0 && segment < len ? segment : len;
      for (size_t off = 0; off < len; off += step) {
        handle_datagram(data + off, std::min(step, len - off), peers[i], m.msg_namelen, local,
                        sockaddr_size(local));
      }
    }
    if (size_t(n) < slots_) return;
  }
  // More waiting: finish at the end of the turn, after the others (edge-triggered: no new edge would come).
  worker_.loop().defer([this, alive = std::weak_ptr<char>(alive_)] {
    if (!alive.expired() && fd_ >= 0) read_batch();
  });
}

void Endpoint::handle_datagram(uint8_t* data, size_t len, const sockaddr_storage& peer, socklen_t peer_len,
                               const sockaddr_storage& local, socklen_t local_len) {
  if (len == 0) return;
  ngtcp2_path path{};
  path.local.addr = const_cast<sockaddr*>(reinterpret_cast<const sockaddr*>(&local));
  path.local.addrlen = local_len;
  path.remote.addr = const_cast<sockaddr*>(reinterpret_cast<const sockaddr*>(&peer));
  path.remote.addrlen = peer_len;
  ngtcp2_pkt_info pi{};

  ngtcp2_version_cid vc;
  const int rv = ngtcp2_pkt_decode_version_cid(&vc, data, len, kCidLength);
  if (rv == NGTCP2_ERR_VERSION_NEGOTIATION) {
    // An unknown version in a datagram of at least 1200 bytes (ngtcp2
    // checks the size, so the answer cannot amplify): RFC 9000 6.
    send_version_negotiation(vc, path);
    return;
  }
  if (rv != 0) return;  // not QUIC (garbage): dropped without an answer
  // Unknown versions may carry IDs of up to 255 bytes (RFC 8999); too
  // short a datagram for Version Negotiation, it is no concern of ours.
  if (vc.dcidlen > NGTCP2_MAX_CIDLEN) return;

  auto it = by_cid_.find(CidKey(vc.dcid, vc.dcidlen));
  if (it != by_cid_.end()) {
    it->second->on_datagram(path, pi, data, len);
    return;
  }
  if (!(data[0] & 0x80)) {
    // A short-header packet for no connection of ours.
    // Our IDs start with the owning worker's index. A client whose address
    // changed (NAT rebinding, migration) hashes to another worker's socket:
    // the datagram goes to its owner, which answers from the same address.
    core::Worker* owner = vc.dcidlen == kCidLength ? core::worker_at(vc.dcid[0]) : nullptr;
    if (owner && owner != &worker_) {
      auto d = std::make_shared<HandedDatagram>();
      d->bytes.assign(data, data + len);
      d->peer = peer;
      d->peer_len = peer_len;
      d->local = local;
      d->local_len = local_len;
      owner->hand_quic_datagram(key_, std::move(d));
      count(QuicEvent::datagram_handed);
      return;
    }
    send_stateless_reset(vc.dcid, vc.dcidlen, path, len);
    return;
  }
  ngtcp2_pkt_hd hd;
  const int arv = ngtcp2_accept(&hd, data, len);
  if (arv != 0 || draining_) {
    // Not a valid first Initial (a truncated one is smaller than the 1200
    // bytes RFC 9000 14.1 requires, so answering would amplify): dropped.
    return;
  }
  new_connection(hd, data, len, path, peer);
}

void Endpoint::new_connection(const ngtcp2_pkt_hd& hd, uint8_t* data, size_t len, const ngtcp2_path& path,
                              const sockaddr_storage& peer) {
  const config::Server& srv = *binding_->group->default_server;
  if (worker_.at_connection_limit()) {
    // Connection floods: worker_connections counts QUIC connections too.
    TORII_LOG(alert, "%u worker_connections are not enough", binding_->config->worker_connections);
    send_stateless_close(hd, path, NGTCP2_CONNECTION_REFUSED);
    return;
  }
  SessionStart st;
  st.client_dcid = hd.dcid;
  st.client_scid = hd.scid;
  st.original_dcid = hd.dcid;
  st.version = hd.version;
  st.path = path;
  st.worker_byte = uint8_t(worker_.index());
  st.static_secret = &secret_;
  st.handshake_timeout_ms = uint64_t(srv.client_header_timeout.count());
  if (srv.http3_settings.retry || handshakes_ >= kRetryAboveHandshakes) {
    // Address validation (amplification and spoofed-source floods): a new
    // client proves it receives at its address by echoing our token.
    if (hd.token.len == 0 || hd.token.base[0] != NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY) {
      send_retry(hd, path, len);
      return;
    }
    if (ngtcp2_crypto_verify_retry_token(&st.original_dcid, hd.token.base, hd.token.len,
                                         reinterpret_cast<const uint8_t*>(secret_.data()), secret_.size(),
                                         hd.version, path.remote.addr, path.remote.addrlen, &hd.dcid,
                                         kRetryTokenLifetime, wall_ns()) != 0) {
      // Forged, expired or replayed from another address: RFC 9000 8.1.3.
      send_stateless_close(hd, path, NGTCP2_INVALID_TOKEN);
      return;
    }
    st.retried = true;
  }

  http::ConnectionInfo info;
  info.id = core::next_connection_id();
  info.peer = peer;
  sockaddr_storage local{};
  std::memcpy(&local, path.local.addr, path.local.addrlen);
  info.remote_addr = net::address_text(info.peer);
  info.remote_port = net::address_port(info.peer);
  info.server_addr = net::address_text(local);
  info.server_port = net::address_port(local);
  info.tls = true;
  info.start_ms = worker_.loop().now_ms();  // keepalive_time

  auto conn = std::make_unique<Connection>(*this, worker_, info, binding_);
  Connection* raw = conn.get();
  raw->client_dcid = hd.dcid;
  raw->in_handshake = true;
  ++handshakes_;
  connections_.emplace(raw, std::move(conn));
  worker_.count_connection(+1);
  if (!raw->start(st)) {
    TORII_LOG(alert, "could not start a QUIC connection, client: %s", info.remote_addr.c_str());
    release(raw);
    return;
  }
  // Retransmitted Initials and 0-RTT still name the client's first DCID.
  add_cid(hd.dcid, raw);
  raw->on_datagram(path, ngtcp2_pkt_info{}, data, len);
}

void Endpoint::add_cid(const ngtcp2_cid& cid, Connection* c) { by_cid_[CidKey(cid)] = c; }

void Endpoint::remove_cid(const ngtcp2_cid& cid) { by_cid_.erase(CidKey(cid)); }

void Endpoint::handshake_finished(Connection* c, bool completed) {
  if (!c->in_handshake) return;
  c->in_handshake = false;
  --handshakes_;
  count(completed ? QuicEvent::handshake_completed : QuicEvent::handshake_failed);
}

void Endpoint::release(Connection* c) {
  auto it = connections_.find(c);
  if (it == connections_.end()) return;
  handshake_finished(c, false);  // a no-op once it completed
  // Only this connection's own IDs: a scan of every route would make
  // closing n connections cost n squared.
  for (const ngtcp2_cid& cid : c->cids()) remove_cid(cid);
  if (auto k = by_cid_.find(CidKey(c->client_dcid)); k != by_cid_.end() && k->second == c) by_cid_.erase(k);
  blocked_.erase(std::remove(blocked_.begin(), blocked_.end(), c), blocked_.end());
  auto owned = std::make_shared<std::unique_ptr<Connection>>(std::move(it->second));
  connections_.erase(it);
  worker_.count_connection(-1);
  worker_.loop().defer([owned, this] {
    owned->reset();
    worker_.check_drained();
  });
}

void Endpoint::drain() {
  draining_ = true;
  std::vector<Connection*> live;
  for (auto& [c, owned] : connections_) live.push_back(c);
  for (Connection* c : live) c->drain();
}

void Endpoint::wait_writable(Connection* c) {
  if (std::find(blocked_.begin(), blocked_.end(), c) == blocked_.end()) blocked_.push_back(c);
}

namespace {

// The source address replies must leave from (the address the client
// wrote to, on a wildcard listen); returns the space it takes.
size_t put_source_address(cmsghdr* c, const ngtcp2_addr& local) { return net::put_source_address(c, local.addr); }

}  // namespace

ssize_t Endpoint::send(const ngtcp2_path& path, const uint8_t* data, size_t len, size_t segment) {
  if (segment == 0 || segment >= len) return send_one(path, data, len);
  if (!gso_) return send_each(path, data, len, segment);
  iovec iov{const_cast<uint8_t*>(data), len};
  msghdr msg{};
  msg.msg_name = path.remote.addr;
  msg.msg_namelen = path.remote.addrlen;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) uint8_t ctrl[CMSG_SPACE(sizeof(in6_pktinfo)) + CMSG_SPACE(sizeof(uint16_t))] = {};
  msg.msg_control = ctrl;
  msg.msg_controllen = sizeof ctrl;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  size_t used = put_source_address(c, path.local);
  c = CMSG_NXTHDR(&msg, c);  // within the whole buffer: msg_controllen is set below
  c->cmsg_level = SOL_UDP;
  c->cmsg_type = UDP_SEGMENT;
  c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
  const uint16_t seg = uint16_t(segment);
  std::memcpy(CMSG_DATA(c), &seg, sizeof seg);
  used += CMSG_SPACE(sizeof(uint16_t));
  msg.msg_controllen = used;
  for (;;) {
    const ssize_t n = sendmsg(fd_, &msg, 0);
    if (n >= 0) return ssize_t(len);
    if (errno == EINTR) continue;
    if (errno == EAGAIN) return 0;
    if (errno == EIO) {
      // The device cannot segment (no checksum offload): GSO off for this socket.
      TORII_LOG(warn, "sendmsg() with UDP_SEGMENT failed (%d: %s), sending packets one by one", errno,
                strerror(errno));
      gso_ = false;
      return send(path, data, len, segment);
    }
    TORII_LOG(info, "sendmsg() failed (%d: %s)", errno, strerror(errno));
    return -1;
  }
}

// Without GSO (`quic_gso off`, nginx's default, or a device that cannot
// segment): the batch's packets still leave in one system call each 64,
// with sendmmsg, instead of a sendmsg per packet.
ssize_t Endpoint::send_each(const ngtcp2_path& path, const uint8_t* data, size_t len, size_t segment) {
  constexpr size_t kPerCall = 64;
  alignas(cmsghdr) uint8_t ctrl[CMSG_SPACE(sizeof(in6_pktinfo))] = {};
  msghdr probe{};
  probe.msg_control = ctrl;
  probe.msg_controllen = sizeof ctrl;
  const size_t ctrl_len = put_source_address(CMSG_FIRSTHDR(&probe), path.local);
  mmsghdr msgs[kPerCall];
  iovec iovs[kPerCall];
  size_t sent = 0;
  while (sent < len) {
    unsigned count = 0;
    for (size_t off = sent; off < len && count < kPerCall; off += segment, ++count) {
      iovs[count] = {const_cast<uint8_t*>(data + off), std::min(segment, len - off)};
      msghdr& m = msgs[count].msg_hdr;
      m = msghdr{};
      m.msg_name = path.remote.addr;
      m.msg_namelen = path.remote.addrlen;
      m.msg_iov = &iovs[count];
      m.msg_iovlen = 1;
      m.msg_control = ctrl;  // read-only for the kernel: shared by every message
      m.msg_controllen = ctrl_len;
    }
    const int n = sendmmsg(fd_, msgs, count, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return ssize_t(sent);
      TORII_LOG(info, "sendmmsg() failed (%d: %s)", errno, strerror(errno));
      return sent > 0 ? ssize_t(sent) : -1;
    }
    for (int i = 0; i < n; ++i) sent += iovs[i].iov_len;
    if (unsigned(n) < count) break;  // the socket is full: the rest waits for EPOLLOUT
  }
  return ssize_t(sent);
}

ssize_t Endpoint::send_one(const ngtcp2_path& path, const uint8_t* data, size_t len) {
  iovec iov{const_cast<uint8_t*>(data), len};
  msghdr msg{};
  msg.msg_name = path.remote.addr;
  msg.msg_namelen = path.remote.addrlen;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) uint8_t ctrl[CMSG_SPACE(sizeof(in6_pktinfo))] = {};
  msg.msg_control = ctrl;
  msg.msg_controllen = sizeof ctrl;
  msg.msg_controllen = put_source_address(CMSG_FIRSTHDR(&msg), path.local);
  for (;;) {
    const ssize_t n = sendmsg(fd_, &msg, 0);
    if (n >= 0) return ssize_t(len);
    if (errno == EINTR) continue;
    if (errno == EAGAIN) return 0;
    TORII_LOG(info, "sendmsg() failed (%d: %s)", errno, strerror(errno));
    return -1;
  }
}

void Endpoint::send_version_negotiation(const ngtcp2_version_cid& vc, const ngtcp2_path& path) {
  uint8_t buf[256];
  uint8_t unused = 0;
  gnutls_rnd(GNUTLS_RND_NONCE, &unused, 1);
  // Our versions, and a reserved one so clients keep negotiation working (RFC 9000 15).
  const uint32_t versions[] = {NGTCP2_PROTO_VER_V1, 0x1a2a3a4au};
  const ngtcp2_ssize n = ngtcp2_pkt_write_version_negotiation(buf, sizeof buf, unused, vc.scid, vc.scidlen, vc.dcid,
                                                              vc.dcidlen, versions, 2);
  if (n > 0) send_one(path, buf, size_t(n));
}

void Endpoint::send_retry(const ngtcp2_pkt_hd& hd, const ngtcp2_path& path, size_t received) {
  ngtcp2_cid scid;
  scid.datalen = kCidLength;
  if (gnutls_rnd(GNUTLS_RND_RANDOM, scid.data, scid.datalen) != 0) return;
  scid.data[0] = uint8_t(worker_.index());
  uint8_t token[NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN];
  const ngtcp2_ssize tlen = ngtcp2_crypto_generate_retry_token(
      token, reinterpret_cast<const uint8_t*>(secret_.data()), secret_.size(), hd.version, path.remote.addr,
      path.remote.addrlen, &scid, &hd.dcid, wall_ns());
  if (tlen < 0) return;
  uint8_t buf[NGTCP2_MAX_UDP_PAYLOAD_SIZE];
  // A Retry is never larger than what it answers (anti-amplification).
  const size_t cap = std::min(sizeof buf, received);
  const ngtcp2_ssize n =
      ngtcp2_crypto_write_retry(buf, cap, hd.version, &hd.scid, &scid, &hd.dcid, token, size_t(tlen));
  if (n > 0) send_one(path, buf, size_t(n));
}

void Endpoint::send_stateless_close(const ngtcp2_pkt_hd& hd, const ngtcp2_path& path, uint64_t error) {
  uint8_t buf[NGTCP2_MAX_UDP_PAYLOAD_SIZE];
  const ngtcp2_ssize n =
      ngtcp2_crypto_write_connection_close(buf, sizeof buf, hd.version, &hd.scid, &hd.dcid, error, nullptr, 0);
  if (n > 0) send_one(path, buf, size_t(n));
}

void Endpoint::send_stateless_reset(const uint8_t* dcid, size_t dcid_len, const ngtcp2_path& path,
                                    size_t received) {
  if (received < kMinResetTrigger || dcid_len == 0) return;
  ngtcp2_cid cid;
  ngtcp2_cid_init(&cid, dcid, dcid_len);
  uint8_t token[NGTCP2_STATELESS_RESET_TOKENLEN];
  if (ngtcp2_crypto_generate_stateless_reset_token(token, reinterpret_cast<const uint8_t*>(secret_.data()),
                                                   secret_.size(), &cid) != 0)
    return;
  // One byte shorter than the trigger, within the sizes a real packet has.
  const size_t size = std::min<size_t>(received - 1, 1200);
  uint8_t random[1200];
  const size_t rand_len = size - NGTCP2_STATELESS_RESET_TOKENLEN;
  gnutls_rnd(GNUTLS_RND_NONCE, random, rand_len);
  uint8_t buf[1200];
  const ngtcp2_ssize n = ngtcp2_pkt_write_stateless_reset(buf, sizeof buf, token, random, rand_len);
  if (n > 0) send_one(path, buf, size_t(n));
}

}  // namespace torii::http3
