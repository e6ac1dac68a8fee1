#include "net/tls_transport.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "config/ssl_config.h"
#include "core/clock.h"
#include "log/error_log.h"
#include "net/address.h"

namespace torii::net {

std::atomic<uint64_t> TlsTransport::failed_{0};

namespace {

constexpr size_t kMaxRecord = 16 * 1024;
// A first record that fits one TCP segment (1460 bytes less TCP options and
// the TLS record overhead) reaches the client's parser a round trip sooner.
constexpr size_t kSmallRecord = 1369;
constexpr int64_t kBurstIdleMs = 1000;  // idle this long: the next write starts a new burst

constexpr size_t kFileChunk = 64 * 1024;  // file bytes read at once, written as records

// Records are built here; a write OpenSSL must retry is rebuilt from the
// same bytes (SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER), so one buffer per
// thread serves every connection. Files are read into it a chunk at a time.
thread_local char t_record[kFileChunk];

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
  if (!ssl_ || SSL_set_fd(ssl_, fd_) != 1) {
    TORII_LOG(alert, "SSL_new() failed (SSL: %s)", take_ssl_errors().c_str());
    phase_ = Phase::failed;
    return;
  }
  SSL_set_accept_state(ssl_);
  BIO* bio = SSL_get_rbio(ssl_);
  BIO_set_callback_ex(bio, &TlsTransport::on_bio);
  BIO_set_callback_arg(bio, reinterpret_cast<char*>(this));
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

void TlsTransport::on_server_name(SSL* ssl, std::string_view name) {
  server_name_.assign(name);
  for (auto& c : server_name_)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  while (!server_name_.empty() && server_name_.back() == '.') server_name_.pop_back();
  const config::Server& s = config::find_server(group_, server_name_);
  if (!s.ssl || !s.ssl->ctx) return;  // no certificate of its own: the default server's
  server_ = &s;
  buffer_size_ = std::min(s.ssl->buffer_size, kMaxRecord);
  SSL_CTX* ctx = s.ssl->ctx.get();
  if (ctx != SSL_get_SSL_CTX(ssl)) {
    SSL_set_SSL_CTX(ssl, ctx);
    SSL_set_options(ssl, SSL_CTX_get_options(ctx));
  }
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
    return handshake_failed("SSL_read_early_data()", e == SSL_ERROR_SSL ? "SSL: " + take_ssl_errors()
                                                                       : std::string(std::strerror(errno)));
  }
  int r = SSL_do_handshake(ssl_);
  if (r == 1) {
    phase_ = Phase::done;
    want_write_ = false;
    early_data_ = !early_.empty() && SSL_get_early_data_status(ssl_) == SSL_EARLY_DATA_ACCEPTED;
    return {IoStatus::ok, 0};
  }
  int e = SSL_get_error(ssl_, r);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
    want_write_ = e == SSL_ERROR_WANT_WRITE;
    return {IoStatus::again, 0};
  }
  if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno == 0)) {
    peer_closed_ = true;
    return handshake_failed("SSL_do_handshake()", "peer closed connection in SSL handshake");
  }
  if (e == SSL_ERROR_SYSCALL) {
    int err = errno;
    return handshake_failed("SSL_do_handshake()", std::to_string(err) + ": " + std::strerror(err));
  }
  return handshake_failed("SSL_do_handshake()", "SSL: " + take_ssl_errors());
}

// OpenSSL reads the socket in as large pieces as its buffer takes: a
// recv() that returned less found the socket empty. Knowing it lets the
// connection stop reading without a recv() that only says EAGAIN.
long TlsTransport::on_bio(BIO* bio, int oper, const char*, size_t len, int, long, int ret, size_t* processed) {
  if (oper == (BIO_CB_READ | BIO_CB_RETURN)) {
    auto* self = reinterpret_cast<TlsTransport*>(BIO_get_callback_arg(bio));
    self->socket_empty_ = ret <= 0 || (processed != nullptr && *processed < len);
  }
  return ret;
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

size_t TlsTransport::record_size() {
  if (retry_len_) return retry_len_;  // OpenSSL holds this record: the same bytes again
  int64_t now = core::monotonic_ms();
  if (now - last_write_ms_ >= kBurstIdleMs) burst_records_ = 0;
  return burst_records_ == 0 ? std::min(kSmallRecord, buffer_size_) : buffer_size_;
}

IoResult TlsTransport::write_record(const char* data, size_t len) {
  if (ERR_peek_error() != 0) ERR_clear_error();
  int n = SSL_write(ssl_, data, int(len));
  if (n > 0) {
    retry_len_ = 0;
    ++burst_records_;
    last_write_ms_ = core::monotonic_ms();
    return {IoStatus::ok, size_t(n)};
  }
  auto r = io_error(n, "SSL_write()");
  if (r.status == IoStatus::again) retry_len_ = len;
  if (r.status == IoStatus::eof) {
    errno = EPIPE;  // a peer that closed cannot take more
    r.status = IoStatus::error;
  }
  return r;
}

size_t TlsTransport::take_written(size_t n) {
  size_t from_held = std::min(n, held_.size());
  held_.erase(0, from_held);
  return n - from_held;
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
  int i = 0;
  size_t off = 0;
  while (true) {
    while (i < count && off == iov[i].iov_len) {
      ++i;
      off = 0;
    }
    if (i == count) return {IoStatus::ok, total};
    size_t rec = record_size();
    const char* data;
    size_t len;
    const size_t left_in_iov = iov[i].iov_len - off;
    if (held_.empty() && (left_in_iov >= rec || (i == count - 1 && !more))) {
      // A whole record, or the last bytes of the call: encrypted in place.
      data = static_cast<const char*>(iov[i].iov_base) + off;
      len = std::min(rec, left_in_iov);
    } else {
      std::memcpy(t_record, held_.data(), held_.size());
      len = held_.size();
      int j = i;
      size_t o = off;
      while (len < rec && j < count) {
        size_t take = std::min(rec - len, iov[j].iov_len - o);
        std::memcpy(t_record + len, static_cast<const char*>(iov[j].iov_base) + o, take);
        len += take;
        o += take;
        if (o == iov[j].iov_len) {
          ++j;
          o = 0;
        }
      }
      if (more && j == count && len < rec) {
        // A file follows at once: its first bytes share this record.
        size_t added = len - held_.size();
        held_.append(t_record + held_.size(), added);
        return {IoStatus::ok, total + added};
      }
      data = t_record;
    }
    auto w = write_record(data, len);
    if (w.status != IoStatus::ok) {
      if (w.status == IoStatus::again && total > 0) return {IoStatus::ok, total};
      return w;
    }
    size_t adv = take_written(w.bytes);
    total += adv;
    while (adv > 0) {
      size_t step = std::min(adv, iov[i].iov_len - off);
      off += step;
      adv -= step;
      if (off == iov[i].iov_len && adv > 0) {
        ++i;
        off = 0;
      }
    }
  }
}

IoResult TlsTransport::sendfile(int file_fd, int64_t offset, size_t len) {
  if (phase_ != Phase::done) return {IoStatus::error, 0};
  // One pread for up to a chunk, then as many records as the socket takes.
  // A record OpenSSL holds for retry is rebuilt from the same file bytes.
  size_t have = held_.size();
  std::memcpy(t_record, held_.data(), have);
  size_t want = std::min(len, kFileChunk - have);
  ssize_t got = 0;
  while (true) {
    got = pread(file_fd, t_record + have, want, offset);
    if (got > 0) break;
    if (got == 0) {
      errno = EIO;  // the file is shorter than it was: truncated under us
      return {IoStatus::error, 0};
    }
    if (errno != EINTR) return {IoStatus::error, 0};
  }
  size_t end = have + size_t(got);
  size_t pos = 0;
  size_t file_bytes = 0;
  while (pos < end) {
    size_t rec = std::min(record_size(), end - pos);
    auto w = write_record(t_record + pos, rec);
    if (w.status != IoStatus::ok) {
      if (w.status == IoStatus::again && file_bytes > 0) break;
      return w;
    }
    pos += w.bytes;
    file_bytes += take_written(w.bytes);
  }
  return {IoStatus::ok, file_bytes};
}

void TlsTransport::shutdown_write() {
  if (phase_ == Phase::done && !fatal_ && !(SSL_get_shutdown(ssl_) & SSL_SENT_SHUTDOWN)) {
    ERR_clear_error();
    SSL_shutdown(ssl_);  // close_notify; a full socket buffer just loses it
    ERR_clear_error();
  }
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
  return info;
}

}  // namespace torii::net
