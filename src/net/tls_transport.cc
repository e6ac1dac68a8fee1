#include "net/tls_transport.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "config/ssl_config.h"
#include "core/clock.h"
#include "log/error_log.h"
#include "net/address.h"
#include "net/client_cert.h"
#include "net/tls_counters.h"

namespace torii::net {

std::atomic<uint64_t> TlsTransport::failed_{0};

namespace {

constexpr size_t kMaxRecord = 16 * 1024;
// A first record that fits one TCP segment (1460 bytes less TCP options and
// the TLS record overhead) reaches the client's parser a round trip sooner.
constexpr size_t kSmallRecord = 1369;
constexpr int64_t kBurstIdleMs = 1000;  // idle this long: the next write starts a new burst

// Plaintext sealed and sent in one go: file bytes read at once, or the
// caller's pieces gathered (with bytes held back from a head).
constexpr size_t kFileChunk = 64 * 1024;

// The plaintext of one gather when it is not sealed in place: file bytes,
// or several of the caller's pieces put together. Only used within a call,
// so one buffer per thread serves every connection.
thread_local char t_record[kFileChunk];

// The records of one write, sealed and about to meet the socket, and where
// each ends (and how many of the caller's bytes it carries).
thread_local std::string t_gather;
thread_local std::vector<TlsTransport::Sealed> t_sealed;

thread_local size_t t_released_buffers = 0;

// Sends data from `sent` on until all is out or the socket is full.
// False on an error (errno says why).
bool send_until_full(int fd, const std::string& data, size_t& sent) {
  while (sent < data.size()) {
    ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && errno == EAGAIN;
  }
  return true;
}

std::string peer_text(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return "?";
  return address_text(a);
}

}  // namespace

TlsTransport::TlsTransport(int fd, std::shared_ptr<const config::Config> config, const config::ListenGroup& group)
    : fd_(fd), config_(std::move(config)), group_(group), server_(group.default_server.get()) {
  const auto& ssl = server_->ssl;
  buffer_size_ = ssl ? std::min(ssl->buffer_size, kMaxRecord) : kMaxRecord;
  if (!ssl || !ssl->ctx) {
    phase_ = Phase::failed;  // build_ssl_contexts refuses such a config; defensive
    return;
  }
  ssl_ = SSL_new(ssl->ctx.get());
  BIO* bio = ssl_ ? BIO_new(socket_method()) : nullptr;
  if (!bio) {
    TORII_LOG(alert, "SSL_new() failed (SSL: %s)", take_ssl_errors().c_str());
    phase_ = Phase::failed;
    return;
  }
  BIO_set_data(bio, this);
  SSL_set_bio(ssl_, bio, bio);  // one reference, read and write side
  SSL_set_accept_state(ssl_);
  // The handshake is several small writes, each waiting on the peer: with
  // Nagle on, the last flight would sit behind a delayed ACK.
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  SSL_set_app_data(ssl_, static_cast<TlsHandshakeHooks*>(this));
}

TlsTransport::~TlsTransport() {
  if (ssl_) {
    if (phase_ == Phase::done && !fatal_) {
      if (peer_closed_) {
        // Nothing to tell a peer that has gone; the session stays resumable.
        SSL_set_shutdown(ssl_, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
      } else if (!(SSL_get_shutdown(ssl_) & SSL_SENT_SHUTDOWN)) {
        SSL_shutdown(ssl_);  // close_notify, best effort: the socket closes next
      }
    }
    ERR_clear_error();
    SSL_free(ssl_);
  }
  if (fd_ >= 0) close(fd_);
}

bool TlsTransport::on_server_name(SSL* ssl, std::string_view name) {
  server_name_.assign(name);
  for (auto& c : server_name_)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  while (!server_name_.empty() && server_name_.back() == '.') server_name_.pop_back();
  const config::Server& s = server_name_.empty() ? *group_.default_server : config::find_server(group_, server_name_);
  if (s.ssl && s.ssl->reject_handshake) return false;  // ssl_reject_handshake: unrecognized_name
  if (!s.ssl || !s.ssl->ctx) return true;  // no certificate of its own: the default server's
  server_ = &s;
  buffer_size_ = std::min(s.ssl->buffer_size, kMaxRecord);
  SSL_CTX* ctx = s.ssl->ctx.get();
  if (ctx != SSL_get_SSL_CTX(ssl)) {
    SSL_set_SSL_CTX(ssl, ctx);
    SSL_set_options(ssl, SSL_CTX_get_options(ctx));
    adopt_client_verification(ssl, ctx);  // ssl_verify_client is the chosen server's
  }
  return true;
}

std::string_view TlsTransport::alpn_protocols() const {
  static constexpr std::string_view kH2 = "\x02h2\x08http/1.1";
  static constexpr std::string_view kH1 = "\x08http/1.1";
  return server_->http2 || group_.listen.http2 ? kH2 : kH1;
}

IoResult TlsTransport::handshake_failed(const char* op, const std::string& why) {
  phase_ = Phase::failed;
  fatal_ = true;
  failed_.fetch_add(1, std::memory_order_relaxed);
  TORII_LOG(info, "%s failed (%s) while SSL handshaking, client: %s", op, why.c_str(), peer_text(fd_).c_str());
  errno = EPROTO;
  return {IoStatus::error, 0};
}

IoResult TlsTransport::handshake() {
  if (phase_ == Phase::done || phase_ == Phase::plain) return {IoStatus::ok, 0};
  if (phase_ == Phase::failed) return {IoStatus::error, 0};
  if (phase_ == Phase::detect) {
    // The first byte of a TLS connection is a handshake record (0x16) or an
    // SSLv2-style hello (high bit set); anything else is plain HTTP.
    unsigned char b = 0;
    ssize_t n = recv(fd_, &b, 1, MSG_PEEK);
    if (n == 0) {
      peer_closed_ = true;
      return {IoStatus::eof, 0};  // a connect-and-close probe: not a failed handshake
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) {
        want_write_ = false;
        return {IoStatus::again, 0};
      }
      return {IoStatus::error, 0};
    }
    if (!(b & 0x80) && b != 0x16) {
      phase_ = Phase::plain;
      return {IoStatus::ok, 0};
    }
    phase_ = SSL_get_max_early_data(ssl_) > 0 ? Phase::early_data : Phase::handshake;
  }
  ERR_clear_error();
  while (phase_ == Phase::early_data) {
    // Early data is read here and handed to the connection once the
    // handshake completes; the connection answers 425 to what is unsafe.
    char buf[4096];
    size_t n = 0;
    int r = SSL_read_early_data(ssl_, buf, sizeof buf, &n);
    if (r == SSL_READ_EARLY_DATA_SUCCESS) {
      early_.append(buf, n);
      continue;
    }
    if (r == SSL_READ_EARLY_DATA_FINISH) {
      phase_ = Phase::handshake;
      break;
    }
    int e = SSL_get_error(ssl_, 0);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
      want_write_ = e == SSL_ERROR_WANT_WRITE;
      return {IoStatus::again, 0};
    }
    if (e == SSL_ERROR_SYSCALL && errno == 0) peer_closed_ = true;
    count_tls_handshake(peer_closed_ ? TlsOutcome::peer_closed
                        : e == SSL_ERROR_SSL ? tls_failure_from_openssl()
                                             : TlsOutcome::io_error);
    return handshake_failed("SSL_read_early_data()", e == SSL_ERROR_SSL ? "SSL: " + take_ssl_errors()
                                                                       : std::string(std::strerror(errno)));
  }
  int r = SSL_do_handshake(ssl_);
  if (r == 1) {
    phase_ = Phase::done;
    want_write_ = false;
    early_data_ = !early_.empty() && SSL_get_early_data_status(ssl_) == SSL_EARLY_DATA_ACCEPTED;
    count_tls_handshake(TlsOutcome::completed);
    return {IoStatus::ok, 0};
  }
  int e = SSL_get_error(ssl_, r);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
    want_write_ = e == SSL_ERROR_WANT_WRITE;
    return {IoStatus::again, 0};
  }
  if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno == 0)) {
    peer_closed_ = true;
    count_tls_handshake(TlsOutcome::peer_closed);
    return handshake_failed("SSL_do_handshake()", "peer closed connection in SSL handshake");
  }
  if (e == SSL_ERROR_SYSCALL) {
    int err = errno;
    count_tls_handshake(err == ECONNRESET || err == EPIPE ? TlsOutcome::peer_closed : TlsOutcome::io_error);
    return handshake_failed("SSL_do_handshake()", std::to_string(err) + ": " + std::strerror(err));
  }
  count_tls_handshake(tls_failure_from_openssl());
  return handshake_failed("SSL_do_handshake()", "SSL: " + take_ssl_errors());
}

// ---- the socket BIO ------------------------------------------------------------
//
// OpenSSL reads and writes the socket through this BIO rather than its own
// socket BIO, for two things that one cannot give: whether a read found the
// socket empty (socket_empty_: the connection then stops reading without a
// recv() that only says EAGAIN), and a place to gather the records of one
// write so that they leave in one send() (for a response of several
// records: one syscall, and on a fast link fewer packets).

BIO_METHOD* TlsTransport::socket_method() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "torii socket");
    BIO_meth_set_read(m, &TlsTransport::bio_read);
    BIO_meth_set_write(m, &TlsTransport::bio_write);
    BIO_meth_set_ctrl(m, &TlsTransport::bio_ctrl);
    BIO_meth_set_create(m, [](BIO* b) {
      BIO_set_init(b, 1);
      return 1;
    });
    return m;
  }();
  return method;
}

int TlsTransport::bio_read(BIO* bio, char* buf, int len) {
  auto* self = static_cast<TlsTransport*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  while (true) {
    ssize_t n = recv(self->fd_, buf, size_t(len), 0);
    if (n >= 0) {
      // OpenSSL asks for as much as its buffer takes: less means empty.
      self->socket_empty_ = n < len;
      return int(n);  // 0: the peer closed
    }
    if (errno == EINTR) continue;
    self->socket_empty_ = true;
    if (errno == EAGAIN) BIO_set_retry_read(bio);
    return -1;
  }
}

int TlsTransport::bio_write(BIO* bio, const char* data, int len) {
  auto* self = static_cast<TlsTransport*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  if (self->gathering_) {
    t_gather.append(data, size_t(len));
    return len;
  }
  if (!self->pending_.empty()) {
    // A handshake or alert record behind ciphertext that waits for the
    // socket: it must not overtake it.
    self->pending_.append(data, size_t(len));
    return len;
  }
  while (true) {
    ssize_t n = send(self->fd_, data, size_t(len), MSG_NOSIGNAL);
    if (n >= 0) return int(n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN) BIO_set_retry_write(bio);
    return -1;
  }
}

long TlsTransport::bio_ctrl(BIO* bio, int cmd, long, void* ptr) {
  switch (cmd) {
    case BIO_CTRL_FLUSH:
    case BIO_CTRL_DUP:
      return 1;
    case BIO_C_GET_FD: {
      const int fd = static_cast<TlsTransport*>(BIO_get_data(bio))->fd_;
      if (ptr != nullptr) *static_cast<int*>(ptr) = fd;
      return fd;
    }
    default:
      return 0;
  }
}

IoResult TlsTransport::io_error(int ret, const char* op) {
  int e = SSL_get_error(ssl_, ret);
  switch (e) {
    case SSL_ERROR_WANT_READ:
      want_write_ = false;
      return {IoStatus::again, 0};
    case SSL_ERROR_WANT_WRITE:
      want_write_ = true;
      return {IoStatus::again, 0};
    case SSL_ERROR_ZERO_RETURN:
      peer_closed_ = true;
      return {IoStatus::eof, 0};
    case SSL_ERROR_SYSCALL:
      fatal_ = true;
      ERR_clear_error();  // keep the thread's queue empty for the next connection's calls
      if (errno == 0) {
        peer_closed_ = true;
        return {IoStatus::eof, 0};
      }
      return {IoStatus::error, 0};  // errno says why
    default:
      fatal_ = true;
      TORII_LOG(info, "%s failed (SSL: %s), client: %s", op, take_ssl_errors().c_str(), peer_text(fd_).c_str());
      errno = EPROTO;
      return {IoStatus::error, 0};
  }
}

IoResult TlsTransport::read(char* buf, size_t len) {
  if (phase_ == Phase::plain) {
    while (true) {
      ssize_t n = recv(fd_, buf, len, 0);
      if (n > 0) return {IoStatus::ok, size_t(n), size_t(n) < len};
      if (n == 0) return {IoStatus::eof, 0};
      if (errno == EINTR) continue;
      return {errno == EAGAIN ? IoStatus::again : IoStatus::error, 0};
    }
  }
  if (phase_ != Phase::done) return {IoStatus::error, 0};
  if (early_pos_ < early_.size()) {
    size_t n = std::min(len, early_.size() - early_pos_);
    std::memcpy(buf, early_.data() + early_pos_, n);
    early_pos_ += n;
    if (early_pos_ == early_.size()) {
      std::string().swap(early_);
      early_pos_ = 0;
    }
    return {IoStatus::ok, n};
  }
  if (ERR_peek_error() != 0) ERR_clear_error();  // SSL_get_error reads the queue: start empty
  socket_empty_ = false;
  int n = SSL_read(ssl_, buf, int(std::min<size_t>(len, 1 << 30)));
  // Drained only if OpenSSL holds no further record either: nothing would
  // announce those bytes.
  if (n > 0) return {IoStatus::ok, size_t(n), socket_empty_ && SSL_has_pending(ssl_) == 0};
  return io_error(n, "SSL_read()");
}

size_t TlsTransport::record_size() const {
  return burst_records_ == 0 ? std::min(kSmallRecord, buffer_size_) : buffer_size_;
}

void TlsTransport::note_write() {
  const int64_t now = core::monotonic_ms();
  if (now - last_write_ms_ >= kBurstIdleMs) burst_records_ = 0;  // idle: a new burst starts small
  last_write_ms_ = now;
}

TlsTransport::Flush TlsTransport::flush_pending() {
  Flush f;
  if (!send_until_full(fd_, pending_, pending_sent_)) {
    f.error = true;  // errno says why
    return f;
  }
  while (pending_first_ < pending_records_.size() && pending_records_[pending_first_].end <= pending_sent_) {
    f.taken += pending_records_[pending_first_].plain;
    ++pending_first_;
  }
  if (pending_sent_ == pending_.size()) {
    std::string().swap(pending_);  // a slow reader's memory goes back
    std::vector<Sealed>().swap(pending_records_);
    pending_first_ = 0;
    pending_sent_ = 0;
    f.done = true;
  } else {
    want_write_ = true;
  }
  return f;
}

IoResult TlsTransport::seal_and_send(const char* data, size_t len, size_t held) {
  // Seal: the records go into t_gather (the BIO is told to gather).
  note_write();
  t_gather.clear();
  t_sealed.clear();
  gathering_ = true;
  size_t pos = 0;
  IoResult failed{IoStatus::ok, 0};
  while (pos < len) {
    if (ERR_peek_error() != 0) ERR_clear_error();
    int n = SSL_write(ssl_, data + pos, int(std::min(record_size(), len - pos)));
    if (n <= 0) {
      failed = io_error(n, "SSL_write()");
      break;
    }
    ++burst_records_;
    pos += size_t(n);
    const size_t from_held = std::min(size_t(n), held);  // reported to the caller already
    held -= from_held;
    t_sealed.push_back({t_gather.size(), size_t(n) - from_held});
  }
  gathering_ = false;
  if (failed.status == IoStatus::eof || failed.status == IoStatus::error) {
    if (failed.status == IoStatus::eof) errno = EPIPE;  // a peer that closed cannot take more
    return {IoStatus::error, 0};
  }

  // Send: all the records in one go, as much as the socket takes.
  size_t sent = 0;
  if (!send_until_full(fd_, t_gather, sent)) return {IoStatus::error, 0};
  size_t taken = 0;
  size_t i = 0;
  for (; i < t_sealed.size() && t_sealed[i].end <= sent; ++i) taken += t_sealed[i].plain;
  if (sent < t_gather.size()) {
    // The socket is full: the rest waits here, sealed. Its plaintext is
    // not reported, so the caller offers it again and it is not sealed twice.
    pending_.assign(t_gather, sent, std::string::npos);
    pending_sent_ = 0;
    for (; i < t_sealed.size(); ++i) pending_records_.push_back({t_sealed[i].end - sent, t_sealed[i].plain});
    want_write_ = true;
  }
  return {IoStatus::ok, taken};
}

IoResult TlsTransport::writev(const iovec* iov, int count, bool more) {
  if (phase_ == Phase::plain) {
    msghdr msg{};
    msg.msg_iov = const_cast<iovec*>(iov);
    msg.msg_iovlen = size_t(count);
    while (true) {
      ssize_t n = sendmsg(fd_, &msg, MSG_NOSIGNAL);
      if (n >= 0) return {IoStatus::ok, size_t(n)};
      if (errno == EINTR) continue;
      return {errno == EAGAIN ? IoStatus::again : IoStatus::error, 0};
    }
  }
  if (phase_ != Phase::done) return {IoStatus::error, 0};
  size_t total = 0;  // caller's bytes taken
  if (!pending_.empty()) {
    Flush f = flush_pending();
    if (f.error) return {IoStatus::error, 0};
    total = f.taken;
    if (!f.done) return total > 0 ? IoResult{IoStatus::ok, total} : IoResult{IoStatus::again, 0};
  }
  int i = 0;
  size_t off = 0;
  size_t skip = total;  // the caller offers again what just left as sealed records
  while (true) {
    while (i < count && (off == iov[i].iov_len || skip > 0)) {
      const size_t step = std::min(skip, iov[i].iov_len - off);
      off += step;
      skip -= step;
      if (off == iov[i].iov_len) {
        ++i;
        off = 0;
      }
    }
    if (i == count) return {IoStatus::ok, total};
    const size_t held = held_.size();
    const size_t left_in_iov = iov[i].iov_len - off;
    const char* data;
    size_t len;
    size_t added;  // the caller's bytes in this gather
    if (held == 0 && (left_in_iov >= kFileChunk || (i == count - 1 && !more))) {
      data = static_cast<const char*>(iov[i].iov_base) + off;  // sealed in place
      len = std::min(left_in_iov, kFileChunk);
      added = len;
    } else {
      std::memcpy(t_record, held_.data(), held);
      len = held;
      int j = i;
      size_t o = off;
      while (len < kFileChunk && j < count) {
        size_t take = std::min(kFileChunk - len, iov[j].iov_len - o);
        std::memcpy(t_record + len, static_cast<const char*>(iov[j].iov_base) + o, take);
        len += take;
        o += take;
        if (o == iov[j].iov_len) {
          ++j;
          o = 0;
        }
      }
      added = len - held;
      if (more && j == count && len < record_size()) {
        // A file follows at once: its first bytes share this record.
        held_.append(t_record + held, added);
        return {IoStatus::ok, total + added};
      }
      data = t_record;
    }
    held_.clear();  // sealed with this gather (and reported when it was held)
    auto r = seal_and_send(data, len, held);
    if (r.status != IoStatus::ok) return r;
    total += r.bytes;
    skip = added;  // sealed: sent, or waiting in pending_
    if (!pending_.empty()) return total > 0 ? IoResult{IoStatus::ok, total} : IoResult{IoStatus::again, 0};
  }
}

IoResult TlsTransport::sendfile(int file_fd, int64_t offset, size_t len) {
  if (phase_ != Phase::done) return {IoStatus::error, 0};
  size_t total = 0;
  if (!pending_.empty()) {
    Flush f = flush_pending();
    if (f.error) return {IoStatus::error, 0};
    total = f.taken;
    if (!f.done || total >= len) return total > 0 ? IoResult{IoStatus::ok, total} : IoResult{IoStatus::again, 0};
  }
  // One pread for up to a chunk (after bytes held back from the head),
  // sealed and sent as records in one go.
  const size_t held = held_.size();
  std::memcpy(t_record, held_.data(), held);
  const size_t want = std::min(len - total, kFileChunk - held);
  ssize_t got = 0;
  while (true) {
    got = pread(file_fd, t_record + held, want, offset + int64_t(total));
    if (got > 0) break;
    if (got == 0) {
      errno = EIO;  // the file is shorter than it was: truncated under us
      return total > 0 ? IoResult{IoStatus::ok, total} : IoResult{IoStatus::error, 0};
    }
    if (errno != EINTR) return total > 0 ? IoResult{IoStatus::ok, total} : IoResult{IoStatus::error, 0};
  }
  held_.clear();
  auto r = seal_and_send(t_record, held + size_t(got), held);
  if (r.status != IoStatus::ok) return r;
  total += r.bytes;
  return total > 0 ? IoResult{IoStatus::ok, total} : IoResult{IoStatus::again, 0};
}

void TlsTransport::release_idle_buffers() {
  // OpenSSL keeps a buffer that still holds bytes (a record read ahead, a
  // write it waits to finish) and says so: then they stay until the next time.
  if (phase_ != Phase::done || !held_.empty() || !pending_.empty()) return;
  if (SSL_free_buffers(ssl_) == 1) ++t_released_buffers;
}

size_t TlsTransport::take_released_buffers() { return std::exchange(t_released_buffers, 0); }

void TlsTransport::shutdown_write() {
  if (phase_ == Phase::done && !fatal_ && !(SSL_get_shutdown(ssl_) & SSL_SENT_SHUTDOWN)) {
    ERR_clear_error();
    SSL_shutdown(ssl_);  // close_notify; a full socket buffer just loses it
    ERR_clear_error();
  }
  if (!pending_.empty()) flush_pending();  // best effort, as the close_notify
  ::shutdown(fd_, SHUT_WR);
}

std::string_view TlsTransport::alpn() const {
  if (!ssl_ || phase_ != Phase::done) return {};
  const unsigned char* p = nullptr;
  unsigned len = 0;
  SSL_get0_alpn_selected(ssl_, &p, &len);
  return {reinterpret_cast<const char*>(p), len};
}

TlsInfo TlsTransport::tls_info() const {
  TlsInfo info;
  if (!ssl_ || phase_ != Phase::done) return info;
  info.protocol = SSL_get_version(ssl_);
  info.cipher = SSL_get_cipher_name(ssl_);
  info.server_name = server_name_;
  info.session_reused = SSL_session_reused(ssl_) == 1;
  info.early_data = early_data_;
  info.client_cert = read_client_cert(ssl_);
  return info;
}

bool TlsTransport::append_protocol(std::string& out) const {
  out.append(SSL_get_version(ssl_));
  return true;
}

bool TlsTransport::append_cipher(std::string& out) const {
  const char* name = SSL_get_cipher_name(ssl_);
  if (name) out.append(name);
  return name != nullptr;
}

bool TlsTransport::append_alpn(std::string& out) const {
  const std::string_view p = alpn();
  out.append(p);
  return !p.empty();
}

}  // namespace torii::net
