#include "stream/udp_session.h"

#include <netinet/in.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "net/address.h"
#include "net/packet_info.h"
#include "net/proxy_protocol.h"
#include "stream/session_log.h"
#include "stream/stream_worker.h"
#include "stream/udp_listener.h"

namespace torii::stream {

namespace {

constexpr size_t kMaxDatagram = 65535;
constexpr size_t kMaxWaiting = 64;  // client datagrams held while the resolver answers

socklen_t address_size(const sockaddr_storage& a) {
  return a.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

}  // namespace

UdpSession::UdpSession(StreamWorker& w, UdpListener& listener, std::shared_ptr<const config::Config> config,
                       const ListenGroup& group, const sockaddr_storage& peer, const sockaddr_storage& local)
    : SessionBase(w, std::move(config), group, peer),
      listener_(&listener),
      timer_(&UdpSession::on_timer, this),
      rates_(w.loop(), &UdpSession::on_rested, this),
      upstream_out_(server_.settings.buffer_size),
      client_out_(server_.settings.buffer_size) {
  facts_.local = local;
  facts_.udp = true;
  upstream_side_.session = this;
}

UdpSession::~UdpSession() {
  worker_.loop().cancel(timer_);
  close_upstream();
  if (listener_) listener_->leave(this, facts_.peer, facts_.local);
}

void UdpSession::start(std::string_view first) {
  requests_ = 1;
  facts_.bytes_received = first.size();
  if (const int refused = admit([this](config::LogLevel level, const std::string& message) {
        log_error(level, message, 0, "initializing session");
      })) {
    finish(refused);
    return;
  }
  if (server_.return_value) {
    std::string reply;
    render(*server_.return_value, facts_, reply);
    send_client(reply);
    finish(200);
    return;
  }
  waiting_.emplace_back(first);
  start_proxy();
}

void UdpSession::from_client(std::string_view datagram) {
  if (state_ == State::done) return;
  // proxy_upload_rate: as nginx, a datagram that comes while the client's
  // direction rests is not read, and is lost (it counts nowhere).
  if (state_ == State::proxying && rates_.allowance(SessionRates::upload, facts_.bytes_received, SIZE_MAX) == 0) {
    arm_timeout();
    return;
  }
  ++requests_;
  facts_.bytes_received += datagram.size();
  if (state_ == State::resolving) {
    if (waiting_.size() < kMaxWaiting) waiting_.emplace_back(datagram);
    return;
  }
  rates_.after_read(SessionRates::upload, datagram.size());
  send_upstream(datagram);
  if (state_ == State::proxying) after_datagram();
}

void UdpSession::listener_gone() {
  listener_ = nullptr;
  if (state_ == State::done) return;
  log_session_summary(server_.settings, facts_.connection, config::LogLevel::info, "disconnected on shutdown");
  finish(200);
}

// ---- choosing the upstream -------------------------------------------------

void UdpSession::start_proxy() {
  choose_upstream([this](std::shared_ptr<const Upstream> u) { proxy_to(std::move(u)); },
                  [this](int status) { finish(status); });
}

void UdpSession::proxy_to(std::shared_ptr<const Upstream> upstream) {
  tries_.start(worker_, std::move(upstream), server_.settings, facts_, worker_.loop().now_ms());
  if (!connect_next()) return;
  // As nginx, the rates apply from here: what came before goes as it came.
  rates_.start(render_rate(server_.settings.upload_rate, "proxy_upload_rate"),
               render_rate(server_.settings.download_rate, "proxy_download_rate"), worker_.loop().now_ms());
  state_ = State::proxying;
  worker_.loop().arm(timer_, server_.settings.timeout.count());
  auto waiting = std::move(waiting_);
  waiting_.clear();
  // proxy_protocol on: the header goes in front of the first datagram, as nginx sends it.
  if (server_.settings.proxy_protocol && !waiting.empty())
    waiting.front().insert(0, net::proxy_protocol_v1_header(facts_.peer, facts_.local));
  for (const auto& d : waiting) {
    send_upstream(d);
    if (state_ != State::proxying) return;
  }
  after_datagram();
}

// A connected UDP socket to the next server; a connect() that fails
// (no route, a bad proxy_bind) moves on as nginx does. false: the session
// ended.
bool UdpSession::connect_next() {
  const Settings& s = server_.settings;
  for (;;) {
    const config::UpstreamServer* srv = tries_.next(facts_, worker_.loop().now_ms());
    if (!srv) {
      log_error(config::LogLevel::error, "no live upstreams", 0, "connecting to upstream");
      finish(502);
      return false;
    }
    upstream_fd_ = open_upstream_socket(*srv, SOCK_DGRAM, s,
                                        [this](config::LogLevel level, const std::string& what, int err) {
                                          log_error(level, what, err, "connecting to upstream");
                                        });
    if (upstream_fd_ < 0) {
      finish(500);
      return false;
    }
    if (::connect(upstream_fd_, reinterpret_cast<const sockaddr*>(&srv->addr), srv->addr_len) == 0 &&
        worker_.loop().add(upstream_fd_, &upstream_side_, EPOLLIN)) {
      facts_.upstream_connect_ms.back() = worker_.loop().now_ms() - tries_.first_try_ms();
      sockaddr_storage local{};
      socklen_t len = sizeof local;
      getsockname(upstream_fd_, reinterpret_cast<sockaddr*>(&local), &len);
      log_session_summary(s, facts_.connection, config::LogLevel::info,
                          "udp proxy " + net::address_with_port(local) + " connected to " + srv->name);
      return true;
    }
    log_error(config::LogLevel::error, "connect() failed", errno, "connecting to upstream");
    tries_.failed(worker_.loop().now_ms());
    close_upstream();
    if (!tries_.may_retry(s, worker_.loop().now_ms())) {
      finish(502);
      return false;
    }
  }
}

// ---- relaying ----------------------------------------------------------------

// A datagram the socket cannot take yet (EAGAIN) waits in upstream_out_
// for EPOLLOUT, as nginx keeps it and waits for the write event.
void UdpSession::send_upstream(std::string_view datagram) {
  sent_upstream(upstream_out_.push(datagram, upstream_sender()), datagram.size());
}

DatagramQueue::Send UdpSession::upstream_sender() {
  return [this](std::string_view d) {
    const ssize_t n = ::send(upstream_fd_, d.data(), d.size(), 0);
    if (n >= 0) to_upstream_ += size_t(n);
    return n;
  };
}

void UdpSession::sent_upstream(DatagramQueue::Outcome out, size_t size) {
  if (out == DatagramQueue::Outcome::waiting && !upstream_wants_out_ && !upstream_eof_) {
    upstream_wants_out_ = true;
    worker_.loop().modify(upstream_fd_, &upstream_side_, EPOLLIN | EPOLLOUT);
  } else if (out == DatagramQueue::Outcome::dropped) {
    log_error(config::LogLevel::info, dropped_line(size, upstream_out_), 0, "proxying and sending to upstream");
  } else if (out == DatagramQueue::Outcome::failed) {
    // The ICMP answer to an earlier datagram (nothing listens there).
    log_error(config::LogLevel::error, "send() failed", errno, "proxying and sending to upstream");
    upstream_failed_ = true;
    finish(200);
  }
}

void UdpSession::upstream_io(uint32_t events) {
  if ((events & EPOLLOUT) && !upstream_out_.empty() && state_ == State::proxying) {
    sent_upstream(upstream_out_.flush(upstream_sender()), 0);
    if (upstream_out_.empty() && state_ == State::proxying) {
      upstream_wants_out_ = false;
      worker_.loop().modify(upstream_fd_, &upstream_side_, EPOLLIN);
      after_datagram();  // the session may end once nothing waits
    }
  }
  if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) read_upstream();
}

std::string UdpSession::dropped_line(size_t size, const DatagramQueue& q) const {
  return "datagram of " + std::to_string(size) + " bytes dropped, " + std::to_string(q.bytes()) +
         " bytes wait to be sent (proxy_buffer_size " + std::to_string(server_.settings.buffer_size) + ")";
}

void UdpSession::read_upstream() {
  static thread_local std::vector<char> buf(kMaxDatagram);
  while (state_ == State::proxying && !upstream_eof_) {
    // proxy_download_rate: while this direction rests, the upstream's
    // datagrams wait in its socket; the rest's end reads again.
    if (rates_.allowance(SessionRates::download, from_upstream_, SIZE_MAX) == 0) {
      arm_timeout();
      return;
    }
    const ssize_t n = ::recv(upstream_fd_, buf.data(), buf.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    ++responses_;  // as nginx, an error counts as the answer that will not come
    if (n < 0) {
      log_error(config::LogLevel::error, "recv() failed", errno, "proxying and reading from upstream");
      upstream_failed_ = true;
      upstream_eof_ = true;
      worker_.loop().remove(upstream_fd_);
      // As nginx: the client is told with an empty datagram.
      send_client(std::string_view());
    } else {
      if (from_upstream_ == 0 && !facts_.upstream_first_byte_ms.empty())
        facts_.upstream_first_byte_ms.back() = worker_.loop().now_ms() - tries_.first_try_ms();
      from_upstream_ += size_t(n);
      rates_.after_read(SessionRates::download, size_t(n));
      send_client(std::string_view(buf.data(), size_t(n)));
    }
    after_datagram();
  }
}

// As to the upstream: what the listening socket cannot take yet waits in
// client_out_ until the listener reports it writable.
void UdpSession::send_client(std::string_view datagram) {
  if (!listener_ || listener_->fd() < 0) return;
  const DatagramQueue::Outcome out = client_out_.push(datagram, client_sender());
  sent_client(out, datagram.size());
}

void UdpSession::client_writable() {
  if (state_ == State::done || !listener_ || listener_->fd() < 0) return;
  sent_client(client_out_.flush(client_sender()), 0);
  if (client_out_.empty()) after_datagram();
}

void UdpSession::sent_client(DatagramQueue::Outcome out, size_t size) {
  if (out == DatagramQueue::Outcome::waiting) {
    listener_->wait_writable(this);
  } else if (out == DatagramQueue::Outcome::dropped) {
    log_error(config::LogLevel::info, dropped_line(size, client_out_), 0, "proxying and sending to client");
  } else if (out == DatagramQueue::Outcome::failed) {
    log_error(config::LogLevel::error, "sendto() failed", errno, "proxying and sending to client");
  }
}

DatagramQueue::Send UdpSession::client_sender() {
  return [this](std::string_view datagram) { return send_client_now(datagram); };
}

ssize_t UdpSession::send_client_now(std::string_view datagram) {
  iovec iov{const_cast<char*>(datagram.data()), datagram.size()};
  msghdr msg{};
  msg.msg_name = &facts_.peer;
  msg.msg_namelen = address_size(facts_.peer);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[net::kPacketInfoSpace] = {};
  if (listener_->wildcard()) {
    // From the address the client wrote to, not the one routing would pick.
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    msg.msg_controllen = net::put_source_address(CMSG_FIRSTHDR(&msg), reinterpret_cast<const sockaddr*>(&facts_.local));
  }
  const ssize_t n = ::sendmsg(listener_->fd(), &msg, 0);
  if (n >= 0) facts_.bytes_sent += size_t(n);
  return n;
}

// nginx's test for a UDP session after each datagram: proxy_requests
// reached stops routing the client here; proxy_responses answers for
// every request end it.
void UdpSession::after_datagram() {
  if (state_ != State::proxying) return;
  const Settings& s = server_.settings;
  arm_timeout();
  if (s.requests && requests_ < s.requests) return;
  if (s.requests && listener_) listener_->forget(this, facts_.peer, facts_.local);
  if (s.responses < 0 || responses_ < uint64_t(s.responses) * requests_) return;
  // As nginx, not while datagrams wait to be sent.
  if (!upstream_out_.empty() || !client_out_.empty()) return;
  log_session_summary(s, facts_.connection, config::LogLevel::info, packets_line("udp done"));
  finish(200);
}

// proxy_timeout since the last datagram; as nginx, it does not run while
// a direction rests.
void UdpSession::arm_timeout() {
  if (rates_.resting()) {
    worker_.loop().cancel(timer_);
  } else {
    worker_.loop().arm(timer_, server_.settings.timeout.count());
  }
}

// A rest ended: the upstream's datagrams that waited are read, and
// proxy_timeout runs again once neither direction rests.
void UdpSession::on_rested(void* self) {
  auto* u = static_cast<UdpSession*>(self);
  if (u->state_ != State::proxying) return;
  if (!u->rates_.resting(SessionRates::download)) u->read_upstream();
  if (u->state_ == State::proxying) u->arm_timeout();
}

std::string UdpSession::packets_line(const char* what) const {
  return std::string(what) + ", packets from/to client:" + std::to_string(requests_) + "/" +
         std::to_string(responses_) + ", bytes from/to client:" + std::to_string(facts_.bytes_received) + "/" +
         std::to_string(facts_.bytes_sent) + ", bytes from/to upstream:" + std::to_string(from_upstream_) + "/" +
         std::to_string(to_upstream_);
}

void UdpSession::on_timer(void* self) {
  auto* u = static_cast<UdpSession*>(self);
  if (u->state_ != State::proxying) return;
  const Settings& s = u->server_.settings;
  if (s.responses < 0 || u->responses_ >= uint64_t(s.responses) * u->requests_) {
    // The answers expected came (or none were counted): a quiet end.
    log_session_summary(s, u->facts_.connection, config::LogLevel::info, u->packets_line("udp timed out"));
    u->finish(200);
    return;
  }
  u->log_error(config::LogLevel::error, "upstream timed out", ETIMEDOUT, "proxying connection");
  u->upstream_failed_ = true;
  u->finish(502);
}

// ---- the end -----------------------------------------------------------------

void UdpSession::finish(int status) {
  if (state_ == State::done) return;
  state_ = State::done;
  worker_.loop().cancel(timer_);
  rates_.stop();
  if (!facts_.upstream_addr.empty()) {
    facts_.upstream_bytes_sent.back() = to_upstream_;
    facts_.upstream_bytes_received.back() = from_upstream_;
    facts_.upstream_session_ms.back() = worker_.loop().now_ms() - tries_.first_try_ms();
  }
  if (upstream_failed_) {
    tries_.failed(worker_.loop().now_ms());
  } else {
    tries_.succeeded();
  }
  close_upstream();
  if (listener_) listener_->leave(this, facts_.peer, facts_.local);
  listener_ = nullptr;
  end_session(status);
  worker_.release(this);
}

void UdpSession::close_upstream() {
  tries_.release();
  if (upstream_fd_ < 0) return;
  if (!upstream_eof_) worker_.loop().remove(upstream_fd_);
  ::close(upstream_fd_);
  upstream_fd_ = -1;
}

void UdpSession::log_error(config::LogLevel level, const std::string& message, int err, const char* action) {
  ErrorContext c = error_context();
  if (c.upstream) {
    c.from_client = facts_.bytes_received;
    c.to_client = facts_.bytes_sent;
    c.from_upstream = from_upstream_;
    c.to_upstream = to_upstream_;
  }
  log_session_error(c, level, message, err, action);
}

}  // namespace torii::stream
