#include "stream/session.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "modules/realip/realip.h"
#include "config/directives.h"
#include "log/error_log.h"
#include "net/address.h"
#include "config/ssl_config.h"
#include "config/upstream_tls_config.h"
#include "net/proxy_protocol.h"
#include "stream/client_hello.h"
#include "stream/session_log.h"
#include "stream/stream_worker.h"
#include "stream/tls_server.h"

namespace torii::stream {

namespace {

constexpr uint32_t kEvents = EPOLLIN | EPOLLOUT | EPOLLRDHUP;

}  // namespace

Session::Session(StreamWorker& w, int fd, std::shared_ptr<const config::Config> config, const ListenGroup& group,
                 const sockaddr_storage& peer)
    : SessionBase(w, std::move(config), group, peer),
      client_fd_(fd),
      timer_(&Session::on_timer, this),
      rates_(w.loop(), &Session::on_rested, this) {
  socklen_t len = sizeof facts_.local;
  getsockname(fd, reinterpret_cast<sockaddr*>(&facts_.local), &len);
  client_io_ = std::make_unique<PlainEndpoint>(fd);
  client_side_.session = this;
  upstream_side_.session = this;
  upstream_side_.upstream = true;
}

Session::~Session() {
  worker_.loop().cancel(timer_);
  close_upstream();
  client_io_.reset();  // its TLS, before the socket under it
  if (client_fd_ >= 0) {
    worker_.loop().remove(client_fd_);
    ::close(client_fd_);
  }
}

void Session::start() {
  const Settings& s = server_.settings;
  if (s.tcp_nodelay) {
    int one = 1;
    setsockopt(client_fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  if (!worker_.loop().add(client_fd_, &client_side_, kEvents)) {
    finish(500);
    return;
  }
  if (group_.listen.proxy_protocol) {
    state_ = State::reading_header;
    worker_.loop().arm(timer_, s.proxy_protocol_timeout.count());
    read_proxy_header();
    return;
  }
  begin();
}

// The header is peeked at until whole, then exactly its bytes are taken
// off the socket: what follows is the client's and goes upstream as is.
void Session::read_proxy_header() {
  char buf[net::kProxyProtocolMaxHeader];
  const ssize_t n = ::recv(client_fd_, buf, sizeof buf, MSG_PEEK);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n <= 0) {
    finish(400);
    return;
  }
  const auto r = net::parse_proxy_protocol(std::string_view(buf, size_t(n)));
  if (r.kind == net::ProxyProtocolResult::Kind::need_more && size_t(n) < sizeof buf) return;
  if (r.kind != net::ProxyProtocolResult::Kind::done) {
    log_error(config::LogLevel::error,
              r.error.empty() ? net::proxy_protocol_broken_header(std::string_view(buf, size_t(n))) : r.error, 0,
              "reading PROXY protocol");
    finish(400);
    return;
  }
  char sink[net::kProxyProtocolMaxHeader];
  if (::recv(client_fd_, sink, r.size, 0) != ssize_t(r.size)) {
    finish(400);
    return;
  }
  if (r.addrs) {
    facts_.has_proxy_protocol = true;
    facts_.pp_src_addr = r.addrs->src_addr;
    facts_.pp_dst_addr = r.addrs->dst_addr;
    facts_.pp_src_port = r.addrs->src_port;
    facts_.pp_dst_port = r.addrs->dst_port;
    take_real_address();
  }
  worker_.loop().cancel(timer_);
  begin();
}

// set_real_ip_from: a trusted peer's PROXY header names the client, which
// is then the session's address for allow/deny, limits and logs.
void Session::take_real_address() {
  const auto& trusted = server_.settings.realip_from;
  if (trusted.empty() || !realip::trusted_peer(net::ip_of(facts_.peer), trusted)) return;
  net::IpAddress client;
  if (!net::parse_ip(facts_.pp_src_addr, client)) return;
  facts_.realip_peer = facts_.peer;
  facts_.peer = net::to_sockaddr(client);
  if (facts_.peer.ss_family == AF_INET) reinterpret_cast<sockaddr_in&>(facts_.peer).sin_port = htons(facts_.pp_src_port);
  if (facts_.peer.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6&>(facts_.peer).sin6_port = htons(facts_.pp_src_port);
}

void Session::begin() {
  if (const int refused = admit([this](config::LogLevel level, const std::string& message) {
        log_error(level, message, 0, "initializing session");
      })) {
    finish(refused);
    return;
  }
  if (group_.listen.ssl) {
    start_handshake();
    return;
  }
  after_handshake();
}

// ---- listen ... ssl ------------------------------------------------------------

void Session::start_handshake() {
  std::string error;
  auto tls = TlsServerEndpoint::start(server_.settings.ssl->ctx.get(), client_fd_, server_.settings.alpn, error);
  if (!tls) {
    log_error(config::LogLevel::alert, error, 0, "SSL handshaking");
    finish(500);
    return;
  }
  client_tls_ = tls.get();
  client_io_ = std::move(tls);
  state_ = State::handshaking;
  worker_.loop().arm(timer_, server_.settings.ssl_handshake_timeout.count());
  drive_handshake();
}

void Session::drive_handshake() {
  const net::IoResult r = client_tls_->handshake();
  if (r.status == net::IoStatus::again) return;
  if (r.status != net::IoStatus::ok) {
    log_error(config::LogLevel::info, client_tls_->error(), 0, "SSL handshaking");
    finish(500);
    return;
  }
  worker_.loop().cancel(timer_);
  // As nginx's stream module: a certificate ssl_verify_client refuses ends the session.
  if (const std::string refused = client_tls_->check_client_certificate(*server_.settings.ssl); !refused.empty()) {
    log_error(config::LogLevel::info, refused, 0, nullptr);
    finish(500);
    return;
  }
  client_tls_->describe(facts_, config_->stream->reads_ssl_ciphers);
  after_handshake();
}

void Session::after_handshake() {
  if (server_.settings.ssl_preread) {
    start_preread();
    return;
  }
  run_handler();
}

// ---- ssl_preread ---------------------------------------------------------------

void Session::start_preread() {
  state_ = State::prereading;
  worker_.loop().arm(timer_, server_.settings.preread_timeout.count());
  read_preread();
}

// As nginx's preread phase: read what has come (at most
// preread_buffer_size) until the ClientHello is whole or is not one; a
// client that ends first ends the session, a full buffer is a 400.
void Session::read_preread() {
  const size_t cap = server_.settings.preread_buffer_size;
  char buf[16 * 1024];
  for (;;) {
    if (preread_.size() >= cap) {
      log_error(config::LogLevel::error, "preread buffer full", 0, "prereading client data");
      finish(400);
      return;
    }
    const net::IoResult r = client_io_->read(buf, std::min(sizeof buf, cap - preread_.size()));
    if (r.status == net::IoStatus::again) return;
    if (r.status != net::IoStatus::ok || r.bytes == 0) {
      finish(200);
      return;
    }
    preread_.append(buf, r.bytes);
    ClientHelloInfo hello;
    const HelloResult h = parse_client_hello(preread_, hello);
    if (h == HelloResult::need_more) continue;
    if (h == HelloResult::done) {
      facts_.has_preread = true;
      facts_.preread_server_name = std::move(hello.server_name);
      facts_.preread_protocol = std::move(hello.protocol);
      facts_.preread_alpn = std::move(hello.alpn);
    }
    run_handler();
    return;
  }
}

void Session::run_handler() {
  worker_.loop().cancel(timer_);
  if (server_.return_value) {
    start_return();
    return;
  }
  start_proxy();
}

// ---- return ------------------------------------------------------------------

void Session::start_return() {
  state_ = State::returning;
  render(*server_.return_value, facts_, reply_);
  write_return();
}

void Session::write_return() {
  while (reply_sent_ < reply_.size()) {
    const net::IoResult r = client_io_->write(reply_.data() + reply_sent_, reply_.size() - reply_sent_);
    if (r.status == net::IoStatus::ok && r.bytes > 0) {
      reply_sent_ += r.bytes;
      continue;
    }
    if (r.status == net::IoStatus::again) {
      worker_.loop().arm(timer_, server_.settings.timeout.count());
      return;  // the rest on EPOLLOUT
    }
    break;  // the client went away
  }
  facts_.bytes_sent = reply_sent_;
  finish(200);
}

// ---- proxy -------------------------------------------------------------------

void Session::start_proxy() {
  state_ = State::connecting;
  choose_upstream([this](std::shared_ptr<const Upstream> u) { proxy_to(std::move(u)); },
                  [this](int status) { finish(status); });
}

void Session::proxy_to(std::shared_ptr<const Upstream> upstream) {
  tries_.start(worker_, std::move(upstream), server_.settings, facts_, worker_.loop().now_ms());
  upload_rate_ = render_rate(server_.settings.upload_rate, "proxy_upload_rate");
  download_rate_ = render_rate(server_.settings.download_rate, "proxy_download_rate");
  // What preread read (and a PROXY header) goes first: the buffer holds it.
  const size_t size = std::max(server_.settings.buffer_size, preread_.size() + net::kProxyProtocolMaxHeader);
  to_upstream_ = std::make_unique<Pipe>(size);
  to_client_ = std::make_unique<Pipe>(size);
  connect_next();
}

void Session::connect_next() {
  const config::UpstreamServer* srv = tries_.next(facts_, worker_.loop().now_ms());
  if (!srv) {
    log_error(config::LogLevel::error, "no live upstreams", 0, "connecting to upstream");
    finish(502);
    return;
  }
  try_start_ms_ = worker_.loop().now_ms();
  rates_.start(upload_rate_, download_rate_, try_start_ms_);  // as nginx, the count starts at each connect
  const Settings& s = server_.settings;
  upstream_fd_ = open_upstream_socket(*srv, SOCK_STREAM, s,
                                      [this](config::LogLevel level, const std::string& what, int err) {
                                        log_error(level, what, err, "connecting to upstream");
                                      });
  if (upstream_fd_ < 0) {
    finish(500);
    return;
  }
  if (s.socket_keepalive) {
    int one = 1;
    setsockopt(upstream_fd_, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  }
  if (::connect(upstream_fd_, reinterpret_cast<const sockaddr*>(&srv->addr), srv->addr_len) != 0 &&
      errno != EINPROGRESS) {
    try_failed("connect() failed", errno);
    return;
  }
  worker_.loop().add(upstream_fd_, &upstream_side_, kEvents);
  worker_.loop().arm(timer_, s.connect_timeout.count());
}

void Session::connected() {
  const int64_t now = worker_.loop().now_ms();
  facts_.upstream_connect_ms.back() = now - try_start_ms_;
  if (server_.settings.tcp_nodelay) {
    int one = 1;
    setsockopt(upstream_fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  if (server_.settings.proxy_ssl) {
    start_upstream_tls();
    return;
  }
  upstream_io_ = std::make_unique<PlainEndpoint>(upstream_fd_);
  start_proxying();
}

// ---- proxy_ssl -----------------------------------------------------------------

// nginx: proxy_ssl_name, else the host of proxy_pass (an upstream {}'s
// name); a port is not part of either.
std::string Session::upstream_tls_name() {
  if (server_.settings.proxy_ssl_name) {
    std::string name;
    render(*server_.settings.proxy_ssl_name, facts_, name);
    return net::tls_server_name(name);
  }
  const std::string& name = tries_.upstream().group->name;
  return tries_.upstream().group->implicit ? net::tls_server_name(name) : name;
}

void Session::start_upstream_tls() {
  const config::UpstreamTlsConfig& t = *server_.settings.proxy_tls;
  const std::string name = upstream_tls_name();
  std::shared_ptr<net::TlsSessionSlot> slot;
  if (t.session_reuse) slot = worker_.tls_session_slot(t.ctx.get(), tries_.server().name);
  std::string error;
  upstream_tls_ = net::TlsClient::start(t.ctx.get(), upstream_fd_, t.server_name ? name : std::string(), std::move(slot),
                                        error);
  if (!upstream_tls_) {
    try_failed(error, 0, "SSL handshaking to upstream");
    return;
  }
  state_ = State::upstream_handshaking;
  worker_.loop().arm(timer_, server_.settings.connect_timeout.count());
  drive_upstream_handshake();
}

void Session::drive_upstream_handshake() {
  const net::IoResult r = upstream_tls_->handshake();
  if (r.status == net::IoStatus::again) return;
  if (r.status != net::IoStatus::ok) {
    try_failed(upstream_tls_->error(), 0, "SSL handshaking to upstream");
    return;
  }
  const config::UpstreamTlsConfig& t = *server_.settings.proxy_tls;
  if (t.verify) {
    if (const std::string refused = upstream_tls_->verify(upstream_tls_name()); !refused.empty()) {
      try_failed(refused, 0, "SSL handshaking to upstream");
      return;
    }
  }
  upstream_io_ = std::make_unique<UpstreamTlsEndpoint>(std::move(upstream_tls_), upstream_fd_);
  start_proxying();
}

void Session::start_proxying() {
  tries_.succeeded();
  if (server_.settings.proxy_protocol) to_upstream_->preload(net::proxy_protocol_v1_header(facts_.peer, facts_.local));
  if (!preread_.empty()) to_upstream_->preload(preread_);
  upstream_sent_base_ = to_upstream_->written_total();
  state_ = State::proxying;
  worker_.loop().arm(timer_, server_.settings.timeout.count());
  pump();
}

void Session::try_failed(const std::string& what, int err, const char* action) {
  log_error(config::LogLevel::error, what, err, action);
  tries_.failed(worker_.loop().now_ms());
  close_upstream();
  if (!tries_.may_retry(server_.settings, worker_.loop().now_ms())) {
    finish(502);
    return;
  }
  connect_next();
}

void Session::close_upstream() {
  if (upstream_fd_ >= 0 && !facts_.upstream_session_ms.empty())
    facts_.upstream_session_ms.back() = worker_.loop().now_ms() - try_start_ms_;
  upstream_io_.reset();  // its TLS, before the socket under it
  upstream_tls_.reset();
  tries_.release();
  if (upstream_fd_ < 0) return;
  worker_.loop().remove(upstream_fd_);
  ::close(upstream_fd_);
  upstream_fd_ = -1;
}

// Moves what it can both ways until nothing moves; each socket is
// edge-triggered, so a call ends only at EAGAIN, a full buffer, an end,
// or a rate limit's rest (its timer calls again).
void Session::pump() {
  bool moved_any = false;
  for (;;) {
    bool moved = false;
    struct Way {
      Pipe& pipe;
      Endpoint &src, &dst;
      SessionRates::Way way;
    };
    for (Way w : {Way{*to_upstream_, *client_io_, *upstream_io_, SessionRates::upload},
                  Way{*to_client_, *upstream_io_, *client_io_, SessionRates::download}}) {
      if (w.pipe.room() > 0) {
        if (const size_t allow = rates_.allowance(w.way, w.pipe.read_total(), w.pipe.room()); allow > 0) {
          const uint64_t before = w.pipe.read_total();
          if (w.pipe.fill(w.src, allow) == Pipe::Io::progress) moved = true;
          rates_.after_read(w.way, size_t(w.pipe.read_total() - before));
          if (w.way == SessionRates::download && before == 0 && w.pipe.read_total() > 0 &&
              !facts_.upstream_first_byte_ms.empty())
            facts_.upstream_first_byte_ms.back() = worker_.loop().now_ms() - try_start_ms_;
        }
      }
      const Pipe::Io out = w.pipe.drain(w.dst);
      if (out == Pipe::Io::progress) moved = true;
      if (out == Pipe::Io::error) {
        // The peer we write to is gone: nothing more can reach it.
        finish(200);
        return;
      }
      if (w.pipe.done() && !w.pipe.shut() && server_.settings.half_close) {
        w.dst.shutdown_write();  // its FIN passes on; the other way keeps flowing
        w.pipe.mark_shut();
      }
    }
    moved_any = moved_any || moved;
    if (!moved) break;
  }
  if (should_finish()) {
    finish(200);
    return;
  }
  // As nginx: proxy_timeout does not run while a direction rests.
  if (rates_.resting()) {
    worker_.loop().cancel(timer_);
  } else if (moved_any || !timer_.armed()) {
    worker_.loop().arm(timer_, server_.settings.timeout.count());
  }
}

// ---- proxy_upload_rate / proxy_download_rate ------------------------------------

void Session::on_rested(void* self) {
  auto* s = static_cast<Session*>(self);
  if (s->state_ == State::proxying) s->pump();
}

// nginx's rule: with proxy_half_close, once both ends are done; without
// it, as soon as one end is done and the other way holds nothing unsent.
bool Session::should_finish() const {
  const bool up_done = to_upstream_->done();
  const bool down_done = to_client_->done();
  if (up_done && down_done) return true;
  if (server_.settings.half_close) return false;
  return (up_done && to_client_->empty()) || (down_done && to_upstream_->empty());
}

void Session::on_io(bool upstream, uint32_t events) {
  if (state_ == State::done) return;
  if (state_ == State::reading_header) {
    if (!upstream) read_proxy_header();
    return;
  }
  if (state_ == State::handshaking) {
    if (!upstream) drive_handshake();
    return;
  }
  if (state_ == State::prereading) {
    if (!upstream) read_preread();
    return;
  }
  if (state_ == State::upstream_handshaking) {
    if (upstream) {
      drive_upstream_handshake();
    } else if (events & (EPOLLERR | EPOLLHUP)) {
      finish(200);
    }
    return;
  }
  if (state_ == State::returning) {
    if (!upstream && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) write_return();
    return;
  }
  if (state_ == State::connecting) {
    if (!upstream) {
      // The client may leave before the upstream answers.
      if (events & (EPOLLERR | EPOLLHUP)) finish(200);
      return;
    }
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(upstream_fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err) {
      try_failed("connect() failed", err);
      return;
    }
    if (events & EPOLLOUT) connected();
    return;
  }
  pump();
}

void Session::on_timer(void* self) {
  auto* s = static_cast<Session*>(self);
  switch (s->state_) {
    case State::connecting:
      s->try_failed("upstream timed out", ETIMEDOUT);
      return;
    case State::proxying:
      s->log_error(config::LogLevel::info, "connection timed out", ETIMEDOUT, "proxying connection");
      s->finish(200);
      return;
    case State::returning:
      s->finish(200);
      return;
    case State::reading_header:
      s->log_error(config::LogLevel::info, "client timed out", ETIMEDOUT, "reading PROXY protocol");
      s->finish(400);
      return;
    case State::handshaking:
      s->log_error(config::LogLevel::info, "client timed out", ETIMEDOUT, "SSL handshaking");
      s->finish(500);
      return;
    case State::prereading:
      // nginx ends the session here (status 200), nothing proxied.
      s->finish(200);
      return;
    case State::upstream_handshaking:
      s->try_failed("upstream timed out", ETIMEDOUT, "SSL handshaking to upstream");
      return;
    case State::done:
      return;
  }
}

void Session::record_try_bytes() {
  if (facts_.upstream_bytes_sent.empty() || state_ != State::proxying) return;
  facts_.upstream_bytes_sent.back() = to_upstream_->written_total() - upstream_sent_base_;
  facts_.upstream_bytes_received.back() = to_client_->read_total();
}

void Session::finish(int status) {
  if (state_ == State::done) return;
  facts_.bytes_received = preread_.size();
  if (to_client_) {
    record_try_bytes();
    facts_.bytes_sent = to_client_->written_total();
    facts_.bytes_received += to_upstream_->read_total();
  }
  if (state_ == State::proxying && upstream_io_) upstream_io_->close_notify();
  if (client_io_) client_io_->close_notify();
  state_ = State::done;
  worker_.loop().cancel(timer_);
  rates_.stop();
  close_upstream();
  end_session(status);
  worker_.release(this);
}

void Session::log_error(config::LogLevel level, const std::string& message, int err, const char* action) {
  ErrorContext c = error_context();
  if (c.upstream) {
    c.from_client = to_upstream_ ? to_upstream_->read_total() : 0;
    c.to_client = to_client_ ? to_client_->written_total() : 0;
    c.from_upstream = to_client_ ? to_client_->read_total() : 0;
    c.to_upstream = to_upstream_ ? to_upstream_->written_total() : 0;
  }
  log_session_error(c, level, message, err, action);
}

}  // namespace torii::stream
