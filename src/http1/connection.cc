#include "http1/connection.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/sockios.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>

#include "core/clock.h"
#include "core/string_pool.h"
#include "http/pipeline.h"
#include "http1/serializer.h"
#include "http/user_agent_quirks.h"
#include "log/access_log.h"
#include "modules/metrics/worker_metrics.h"
#include "log/error_log.h"
#include "net/address.h"
#include "modules/post_action/post_action.h"

namespace torii::http1 {

namespace {
constexpr size_t kReadChunk = 16 * 1024;
constexpr size_t kPipelineOutputLimit = 64 * 1024;  // queued bytes before we stop reading ahead
constexpr size_t kDrainLowMark = 16 * 1024;  // a streaming handler resumes below this
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

// The most a request head may take: nginx reads it into a
// client_header_buffer_size buffer, then moves on into the
// large_client_header_buffers, each line whole in one buffer.
size_t head_limit(const config::Server& srv) {
  return srv.client_header_buffer_size + srv.large_client_header_buffers.size * srv.large_client_header_buffers.number;
}

bool is_wildcard(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr == INADDR_ANY;
  if (a.ss_family == AF_INET6)
    return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr);
  return false;
}
}  // namespace

Connection::Connection(core::Worker& worker, std::unique_ptr<net::Transport> transport, const sockaddr_storage& peer,
                       std::shared_ptr<core::ListenBinding> binding,
                       std::shared_ptr<const net::ProxyProtocolAddrs> proxy_protocol)
    : worker_(worker),
      transport_(std::move(transport)),
      binding_(std::move(binding)),
      timer_(&Connection::on_timer, this) {
  const int fd = transport_->fd();
  info_.id = core::next_connection_id();
  info_.start_ms = worker_.loop().now_ms();
  info_.fd = fd;
  info_.peer = peer;
  info_.remote_addr = net::address_text(peer);
  info_.remote_port = net::address_port(peer);
  info_.proxy_protocol = std::move(proxy_protocol);
  const auto& listen = binding_->group->listen;
  sockaddr_storage local = listen.addr;
  if (is_wildcard(listen.addr)) {
    socklen_t len = sizeof local;
    getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
  }
  info_.server_addr = net::address_text(local);
  info_.server_port = net::address_port(local);
  info_.tls = transport_->is_tls();
  // h2c (prior knowledge) on a plain address with `http2 on` or `listen ... http2`.
  h2c_ = !info_.tls && (listen.http2 || binding_->group->default_server->http2);
}

Connection::~Connection() { worker_.loop().cancel(timer_); }

void Connection::start() {
  // Write readiness is watched only once a write blocks: most connections
  // never fill the socket, and an unwatched event costs the kernel nothing.
  worker_.loop().add(transport_->fd(), this, EPOLLIN | EPOLLRDHUP);
  start_next_request();
  if (transport_->is_tls()) state_ = State::handshaking;
  drive();
}

void Connection::on_io(uint32_t events) {
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) readable_ = true;
  if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) peer_closing_ = true;
  if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) writable_ = true;
  drive();
}

void Connection::wait_writable() {
  writable_ = false;
  if (watching_writes_) return;
  watching_writes_ = true;
  // Edge-triggered: adding the interest reports a socket that became
  // writable in between, so no wake-up is lost.
  worker_.loop().modify(transport_->fd(), this, EPOLLIN | EPOLLOUT | EPOLLRDHUP);
}

void Connection::arm_timer(int64_t ms) {
  shed_due_ = false;
  worker_.loop().arm(timer_, ms);
}

void Connection::arm_idle_timer(int64_t ms) {
  const bool shed = transport_->is_tls() && ms > kShedAfterMs;
  arm_timer(shed ? kShedAfterMs : ms);
  shed_due_ = shed;
}

void Connection::on_timer(void* self) { static_cast<Connection*>(self)->on_timeout(); }

void Connection::on_timeout() {
  if (shed_due_) {
    transport_->release_idle_buffers();
    const int64_t idle = info_.requests == 0 ? server_->client_header_timeout.count() : keepalive_ms_;
    arm_timer(std::max<int64_t>(idle - kShedAfterMs, 1));
    return;
  }
  switch (state_) {
    case State::reading_head:
      if (in_.size() > head_start_) {
        TORII_LOG(info, "client timed out (110: Connection timed out) while reading client request headers, client: %s",
                  info_.remote_addr.c_str());
      }
      break;
    case State::reading_body:
      if (body_pending_) {
        TORII_LOG(info, "client timed out (110: Connection timed out) while reading client request body, client: %s",
                  info_.remote_addr.c_str());
        // Logged as nginx's 408 when no response had begun (nothing is sent).
        if (request_ && !request_->exchange.head_sent() && request_->exchange.status == 0) request_->exchange.status = 408;
      } else {  // the response's last bytes wait for the socket
        TORII_LOG(info, "client timed out (110: Connection timed out) while sending response to client, client: %s",
                  info_.remote_addr.c_str());
      }
      break;
    case State::writing:
      TORII_LOG(info, "client timed out (110: Connection timed out) while sending response to client, client: %s",
                info_.remote_addr.c_str());
      break;
    case State::handshaking:
      TORII_LOG(info, "client timed out (110: Connection timed out) while SSL handshaking, client: %s",
                info_.remote_addr.c_str());
      break;
    default:
      break;
  }
  // reset_timedout_connection: a client that stopped reading or sending
  // mid-request gets a RST, so the kernel drops what it still queues for it.
  if (request_ && request_->exchange.server && request_->exchange.settings().reset_timedout_connection && transport_) {
    linger lg{1, 0};
    setsockopt(transport_->fd(), SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  }
  close_now();
}

bool Connection::idle_keepalive() const {
  if (state_ != State::reading_head || info_.requests == 0 || in_.size() != head_start_ || !out_.empty()) return false;
  // A client still reading the last response (or about to send the next
  // request) would meet a reset: only one quiet for a while is closed.
  // keepalive_min_timeout: nor one whose client was promised that long.
  if (worker_.loop().now_ms() - idle_since_ms_ < std::max(kQuietBeforeReclaimMs, keepalive_min_ms_)) return false;
  // A request already in the socket, or a response still in its send
  // queue, would be cut by a close (a reset discards both).
  int unread = 0, unsent = 0;
  const int fd = transport_->fd();
  return ioctl(fd, FIONREAD, &unread) == 0 && unread == 0 && ioctl(fd, SIOCOUTQ, &unsent) == 0 && unsent == 0;
}

void Connection::end_keepalive() {
  // Once a response head has promised keep-alive, closing after it would
  // race the client's next request: only a connection waiting for its
  // next head, its last response handed to the socket, is told.
  if (state_ != State::reading_head || !out_.empty()) return;
  if (keep_alive_) {
    keep_alive_ = false;
    idle_since_ms_ = std::max(idle_since_ms_, worker_.loop().now_ms());  // quiet from now on
    return;
  }
  if (idle_keepalive()) close_now();
}

void Connection::drain() {
  draining_ = true;
  keep_alive_ = false;
  if (state_ != State::reading_head || in_.size() != head_start_ || !out_.empty()) return;
  // keepalive_min_timeout: a client that sends its next request soon after
  // a response must not meet a closed connection (nginx leaves such a
  // connection out of a graceful stop until it has been idle that long; a
  // request that comes meanwhile is answered, with Connection: close).
  if (info_.requests > 0 && keepalive_min_ms_ > 0) {
    const int64_t left = std::min(keepalive_min_ms_, keepalive_ms_) - (worker_.loop().now_ms() - idle_since_ms_);
    if (left > 0) {
      arm_timer(left);  // the idle timer: it closes the connection when it fires
      return;
    }
  }
  close_now();
}

// Reads until EAGAIN or the buffer limit. Returns false if the connection closed.
bool Connection::fill_buffer(std::string& buf, size_t limit) {
  // Read into scratch and append what came: a request is usually a few
  // hundred bytes, and growing the string first would zero 16 KB per read.
  char scratch[kReadChunk];
  if (buf.empty() && buf.capacity() == std::string().capacity()) buf = core::StringPool::take();
  while (readable_) {
    size_t room = limit > buf.size() ? std::min(kReadChunk, limit - buf.size()) : 0;
    if (room == 0) return true;  // full: the caller decides (limit reached)
    auto r = transport_->read(scratch, room);
    if (r.status == net::IoStatus::ok) {
      size_t n = r.bytes;
      buf.append(scratch, n);
      if (r.drained) {
        // The socket is empty; the next edge will tell us otherwise.
        // Saves an EAGAIN syscall per request. After the peer's FIN no
        // edge will come: the caller parses what came, then reads the end.
        if (peer_closing_) return true;
        readable_ = false;
      }
      continue;
    }
    if (r.status == net::IoStatus::again) {
      if (transport_->wants_write()) wait_writable();  // TLS: a read that must write first
      readable_ = false;
      continue;
    }
    // EOF or error.
    if (r.status == net::IoStatus::error) {
      TORII_LOG(info, "recv() failed (%d: %s), client: %s", errno, strerror(errno), info_.remote_addr.c_str());
    } else if (state_ == State::reading_head && in_.size() > head_start_) {
      // The client sent its request(s) and closed its side (a TLS client's
      // close_notify, or a FIN read in the same turn): what it sent is
      // answered first, then the connection ends (reading_head).
      client_eof_ = true;
      readable_ = false;
      return true;
    }
    close_now();
    return false;
  }
  return true;
}

bool Connection::flush_output() {
  auto r = out_.flush(*transport_, use_sendfile_);
  if (r == OutputQueue::Result::error) {
    if (errno != EPIPE && errno != ECONNRESET) {
      TORII_LOG(info, "writev() failed (%d: %s) while sending response to client, client: %s", errno,
                strerror(errno), info_.remote_addr.c_str());
    }
    close_now();
    return false;
  }
  if (r == OutputQueue::Result::again) {
    wait_writable();
    arm_timer(request_ ? request_->exchange.settings().send_timeout.count() : 60'000);
  }
  return true;
}

void Connection::drive() {
  in_drive_ = true;
  struct Leave {
    bool& flag;
    ~Leave() { flag = false; }
  } leave{in_drive_};
  while (state_ != State::closed) {
    if (!out_.empty() && writable_) {
      if (!flush_output()) return;
    }
    if (drain_cb_ && out_.memory_bytes() <= kDrainLowMark) {
      auto cb = std::move(drain_cb_);
      drain_cb_ = nullptr;
      cb();  // may queue more output: the loop flushes it
      continue;
    }
    switch (state_) {
      case State::handshaking: {
        auto r = transport_->handshake();
        if (r.status == net::IoStatus::again) {
          if (transport_->wants_write()) wait_writable();
          else readable_ = false;
          return;
        }
        if (r.status != net::IoStatus::ok) {
          close_now();  // the TLS layer logged why
          return;
        }
        if (transport_->plain_http()) {
          info_.tls = false;  // the request is read in the clear and answered with a 400 page
        } else {
          auto tls = transport_->tls_info();
          info_.ssl_server_name.assign(tls.server_name);
          info_.ssl_session_reused = tls.session_reused;
          info_.ssl_early_data = tls.early_data;
          info_.tls_details = transport_->tls_details();
          info_.client_cert = std::move(tls.client_cert);
          server_ = &first_server();
          in_limit_ = head_limit(*server_) + 1;
        }
        state_ = State::reading_head;
        if (transport_->alpn() == "h2") {
          hand_over_to_http2();  // ALPN chose HTTP/2
          return;
        }
        continue;
      }
      case State::reading_head: {
        // h2c with prior knowledge: the client preface instead of a request.
        const auto preface = h2c_ && info_.requests == 0 && head_start_ == 0 && !in_.empty()
                                 ? match_h2_preface(in_)
                                 : PrefaceMatch::no;
        if (preface == PrefaceMatch::http2) {
          hand_over_to_http2();
          return;
        }
        if (in_.size() > head_start_ && preface == PrefaceMatch::no) {
          if (!request_) begin_request();
          size_t consumed = 0;
          auto st = request_->parser.parse(std::string_view(in_).substr(head_start_), request_->exchange.req, consumed);
          if (st == ParseStatus::done) {
            on_head(consumed);
            continue;
          }
          if (st == ParseStatus::error) {
            respond_error(request_->parser.error().status, request_->parser.error().reason);
            continue;
          }
        }
        if (client_eof_) {
          if (in_.size() > head_start_) {
            // What came before the end of the stream is not a whole request.
            TORII_LOG(info, "client prematurely closed connection while reading client request headers, client: %s",
                      info_.remote_addr.c_str());
            close_now();
            return;
          }
          keep_alive_ = false;  // every request it sent is answered: finish writing, then close
          state_ = State::writing;
          continue;
        }
        if (!readable_) return;
        bool was_empty = in_.size() == head_start_;
        size_t before = in_.size();
        if (!fill_buffer(in_, in_limit_)) return;
        if (in_.size() == before) {
          if (readable_) respond_error(431, "client sent too large request");  // buffer full, parser undecided
          continue;
        }
        if (was_empty) {
          reading_.set();
          arm_timer(default_server().client_header_timeout.count());
          if (!request_) begin_request();
          request_->exchange.start = std::chrono::steady_clock::now();  // $request_time starts with the request
        }
        continue;
      }
      case State::reading_body: {
        if (!consume_buffered_body()) return;
        if (!body_pending_) {
          if (request_->exchange.finished()) {
            // The line is logged when the last byte has left: until then
            // the flush at the top waits for the socket (send_timeout). A
            // response that ended in this turn is flushed first.
            if (!out_.empty()) {
              if (writable_) continue;
              return;
            }
            finish_request();
            continue;
          }
          // Waiting for an asynchronous handler (the proxy), which keeps
          // its own timeouts: no client timer runs while nothing is queued.
          if (!out_.empty() && writable_) continue;  // queued in this turn: flush it first
          if (out_.empty()) worker_.loop().cancel(timer_);
          if (client_eof_ && !request_->exchange.ignore_client_abort) {
            close_now();  // the end came with the request: the client has gone (499)
            return;
          }
          if (readable_ && !client_eof_) watch_client();
          return;
        }
        const bool held = body_paused_ || body_held();
        if (held && out_.empty()) worker_.loop().cancel(timer_);  // the handler holds the body back
        if (client_eof_ && !held) {
          // The end of the stream came with the head, before the body's end.
          TORII_LOG(info, "client prematurely closed connection while reading client request body, client: %s",
                    info_.remote_addr.c_str());
          close_now();
          return;
        }
        if (!readable_ || held) return;
        size_t before = body_in_.size();
        if (!fill_buffer(body_in_, kReadChunk * 4)) return;
        if (body_in_.size() != before && !tunnel_) arm_timer(request_->exchange.settings().client_body_timeout.count());
        continue;
      }
      case State::writing: {
        bool may_pipeline = keep_alive_ && out_.memory_bytes() < kPipelineOutputLimit && !out_.has_file();
        if (out_.empty() || may_pipeline) {
          if (!keep_alive_) {
            start_lingering_close();
            continue;
          }
          start_next_request();
          continue;
        }
        return;  // wait for EPOLLOUT
      }
      case State::lingering: {
        char sink[4096];
        while (true) {
          auto r = transport_->read(sink, sizeof sink);
          if (r.status == net::IoStatus::ok) continue;
          if (r.status == net::IoStatus::again) {
            readable_ = false;
            break;
          }
          close_now();
          return;
        }
        if (worker_.loop().now_ms() >= linger_deadline_) {
          close_now();
          return;
        }
        arm_linger_timer();
        return;
      }
      case State::closed:
        return;
    }
  }
}

Connection::PrefaceMatch Connection::match_h2_preface(std::string_view in) {
  static constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  static constexpr size_t kRequestLine = 14;  // "PRI * HTTP/2.0": no HTTP/1 request looks like it
  const size_t n = std::min(in.size(), kPreface.size());
  size_t same = 0;
  while (same < n && in[same] == kPreface[same]) ++same;
  if (same < n) return same >= kRequestLine ? PrefaceMatch::http2 : PrefaceMatch::no;
  return n == kPreface.size() ? PrefaceMatch::http2 : PrefaceMatch::partial;
}

// The transport, the connection facts and the bytes read so far move to an
// HTTP/2 connection; this one is done (released, not closed).
void Connection::hand_over_to_http2() {
  state_ = State::closed;
  worker_.loop().cancel(timer_);
  request_.reset();
  worker_.start_http2(std::move(transport_), info_, binding_, std::move(in_));
  worker_.release(this);
}

void Connection::start_next_request() {
  // Drop the finished request's bytes, keep what was pipelined after it.
  if (head_len_ > 0) {
    in_.swap(body_in_);
    body_in_.clear();
    head_len_ = 0;
  }
  head_start_ = 0;
  next_pipelined_ = !in_.empty();  // its bytes came before this response went
  if (draining_ || binding_->retired) {
    if (in_.empty()) {
      close_now();
      return;
    }
    keep_alive_ = false;
  }
  config_ = binding_->config;
  const auto& srv = first_server();
  in_limit_ = head_limit(srv) + 1;
  request_.reset();  // made when the next request's first byte arrives
  server_ = &srv;
  chunked_response_ = false;
  body_pending_ = false;
  state_ = State::reading_head;
  if (in_.empty()) {
    // Idle between requests: the keep-alive timer, else the header timer.
    int64_t idle = info_.requests == 0 ? srv.client_header_timeout.count() : keepalive_ms_;
    arm_idle_timer(idle);
    idle_since_ms_ = worker_.loop().now_ms();
    // An idle keep-alive connection holds no buffers (at most a few hundred
    // bytes each, but there may be tens of thousands of such connections).
    core::StringPool::give(in_);
    core::StringPool::give(body_in_);
    out_.release_if_empty();
  } else {
    arm_timer(srv.client_header_timeout.count());
  }
}

// The server a request starts with, before its Host is read: the one the
// TLS client named (SNI), as nginx, so that an error met before the Host
// (a bad request line or URI) gets that server's add_header, error_page and
// buffers; else the address's default server.
const config::Server& Connection::first_server() const {
  const auto& group = *binding_->group;
  if (info_.ssl_server_name.empty()) return *group.default_server;  // (SNI is kept lower-case)
  return config::find_server(group, info_.ssl_server_name);
}

// The parser and the exchange of the request whose first bytes are here;
// an idle keep-alive connection holds neither.
void Connection::begin_request() {
  const auto& srv = *server_;
  ParserLimits limits;
  limits.max_request_line = srv.large_client_header_buffers.size;
  limits.max_header_line = srv.large_client_header_buffers.size;
  limits.max_head = head_limit(srv);
  limits.allow_underscores = srv.underscores_in_headers;
  limits.ignore_invalid = srv.ignore_invalid_headers;
  limits.max_headers = srv.max_headers;
  request_ = std::make_unique<PendingRequest>(limits, *this, info_, worker_.services());
  request_->exchange.config = config_;
  request_->exchange.server = &srv;
  request_->exchange.pipelined = next_pipelined_;
}

void Connection::on_head(size_t head_len) {
  reading_.clear();
  head_len_ = head_len;
  ++info_.requests;
  if (info_.requests == 1) metrics::record_connection(metrics::conn_h1);
  log_pending_ = true;
  sent_mark_ = out_.bytes_written() + out_.memory_bytes();
  http::Exchange& ex = request_->exchange;
  ex.start_unix_ms = core::unix_ms();
  ex.request_length = int64_t(head_len);
  // Take the config current now: the server and locations must come from
  // the snapshot the exchange holds alive, even if a reload lands mid-request.
  config_ = binding_->config;
  ex.config = config_;
  server_ = &config::find_server(*binding_->group, ex.req.host);
  ex.server = server_;
  if (!ex.req.keep_alive) keep_alive_ = false;
  // The parser merged slashes (the server is known only now): a server with
  // merge_slashes off reads the path again keeping them, so "//.." cancels
  // the empty segment alone, as nginx's (the path was valid merged, and
  // empty segments only make ".." reach less far).
  if (!server_->merge_slashes) {
    std::string kept;
    if (normalize_path(ex.req.raw_path, false, kept)) ex.req.path = std::move(kept);
  }

  const auto& req = ex.req;
  // What follows the head is body or the next request: set it apart.
  body_in_.assign(in_, head_len, std::string::npos);
  in_.resize(head_len);
  bool has_body = req.chunked || req.content_length > 0;
  if (has_body) {
    if (req.chunked) body_.start_chunked();
    else body_.start_length(req.content_length);
  }
  body_pending_ = has_body;
  state_ = State::reading_body;
  body_reader_ = nullptr;
  body_paused_ = false;
  continue_sent_ = false;
  interim_bytes_ = 0;
  if (!validate_buffered_body()) return;

  if (transport_->plain_http()) {
    http::send_error(ex, 497);  // nginx's "plain HTTP request was sent to HTTPS port"
  } else {
    http::run_request(ex);
  }

  if (ex.close_connection) keep_alive_ = false;
  if (ex.close_connection && !ex.head_sent()) {
    close_now();  // return 444
    return;
  }
  if (!keep_alive_ && body_pending_ && !body_reader_ && !body_held()) {
    // Nobody wants the rest of the body: finish now and linger.
    body_pending_ = false;
  }
  // The body owed from here on, read for the handler or dropped, is timed
  // by the location's client_body_timeout (between two reads, as nginx),
  // not by the header timer left from the head.
  if (state_ == State::reading_body && body_pending_ && !tunnel_ && !body_paused_ && !body_held())
    arm_timer(ex.settings().client_body_timeout.count());
}

// Reads and drops the buffered part of the request body. False if the
// connection was closed (a bad body before any response: 400 first).
// Decodes the buffered part of the request body: to the handler's reader
// when it has one, else dropped. False if the connection was closed.
bool Connection::consume_buffered_body() {
  if (!body_pending_ || body_in_.empty() || body_paused_ || body_held()) return true;
  size_t consumed = 0;
  bool pause = false;
  auto st = body_.decode(body_in_, consumed, [&](std::string_view d) {
    if (body_reader_ && !body_reader_->on_body_data(d)) pause = true;
  });
  request_->exchange.request_length += int64_t(consumed);
  body_in_.erase(0, consumed);  // keep only what follows (pipelined bytes)
  if (pause) body_paused_ = true;
  if (st == BodyDecoder::Status::done) {
    body_pending_ = false;
    if (body_reader_) body_reader_->on_body_end();
    body_reader_ = nullptr;
  }
  if (st != BodyDecoder::Status::error) return true;
  body_pending_ = false;
  TORII_LOG(info, "client sent invalid request body (%s), client: %s", body_.error(), info_.remote_addr.c_str());
  close_now();  // the handler's state goes with the exchange
  return false;
}

// Judges the body bytes that came with the head before the handler runs,
// so that a broken body gets a 400 instead of the handler's response. A
// copy of the decoder reads them; nothing is consumed.
bool Connection::validate_buffered_body() {
  if (!body_pending_ || body_in_.empty()) return true;
  BodyDecoder probe = body_;
  size_t consumed = 0;
  if (probe.decode(body_in_, consumed, [](std::string_view) {}) != BodyDecoder::Status::error) return true;
  body_pending_ = false;
  respond_error(400, probe.error());
  return state_ != State::closed;
}

// No reader yet, and the request has not reached its content handler (an
// auth_request or a limit_req delay is pending): the body waits unread for
// the handler, as nginx's, instead of being dropped.
bool Connection::body_held() const {
  const http::Exchange& ex = request_->exchange;
  return !body_reader_ && !ex.content_started && !ex.head_sent() && !ex.finished();
}

void Connection::read_body(http::BodyReader* reader) {
  if (!body_pending_) {
    reader->on_body_end();
    return;
  }
  body_reader_ = reader;
  if (request_->exchange.req.expect_continue && !continue_sent_) {
    out_.append(kContinue);
    continue_sent_ = true;
  }
  schedule_drive();
}

void Connection::resume_body() {
  if (!body_paused_) return;
  body_paused_ = false;
  schedule_drive();
}

void Connection::set_drain_callback(std::function<void()> cb) {
  drain_cb_ = std::move(cb);
  schedule_drive();
}

// Sink calls made by an asynchronous handler (outside drive) run the state
// machine at the end of the turn: never inside the handler's own callback.
void Connection::schedule_drive() {
  if (in_drive_ || drive_scheduled_ || state_ == State::closed) return;
  drive_scheduled_ = true;
  std::weak_ptr<char> alive = alive_;
  worker_.loop().defer([this, alive] {
    if (alive.expired()) return;
    drive_scheduled_ = false;
    drive();
  });
}

void Connection::respond_error(int status, const char* reason) {
  reading_.clear();
  if (status == 494)  // max_headers: nginx's own line
    TORII_LOG(info, "%s, client: %s", reason, info_.remote_addr.c_str());
  else
    TORII_LOG(info, "client sent invalid request (%s), client: %s", reason, info_.remote_addr.c_str());
  if (!request_) begin_request();
  http::Exchange& ex = request_->exchange;
  ex.start_unix_ms = core::unix_ms();
  // The server the error belongs to, as nginx's: the first valid Host's when
  // one was read, the default one for an HTTP/1.1 request without Host,
  // else the one the request started with (SNI's, or the default).
  std::string host;
  const auto& why = request_->parser.error();
  if (why.no_host)
    server_ = &default_server();
  else if (!why.in_target && head_start_ <= in_.size() &&
           request_->parser.first_host(std::string_view(in_).substr(head_start_), host))
    server_ = &config::find_server(*binding_->group, host);
  ex.server = server_;
  // The parser may have filled part of the head: keep only what is safe to log.
  ex.req = http::RequestHead();
  ex.req.keep_alive = false;
  ex.close_connection = true;
  keep_alive_ = false;
  head_len_ = in_.size();
  body_in_.clear();
  ++info_.requests;
  log_pending_ = true;
  sent_mark_ = out_.bytes_written() + out_.memory_bytes();
  state_ = State::reading_body;
  body_pending_ = false;
  http::send_error(ex, status);
  if (!ex.head_sent()) close_now();
}

void Connection::send_head(const http::ResponseHead& head) {
  if (state_ == State::closed) return;
  schedule_drive();
  http::Exchange& ex = request_->exchange;
  const auto& s = ex.settings();
  if (keep_alive_) {
    keep_alive_ = ex.req.keep_alive && !ex.close_connection && !draining_ &&
                  info_.requests < s.keepalive_requests && s.keepalive_timeout.count() > 0 &&
                  worker_.loop().now_ms() - info_.start_ms <= s.core.keepalive_time.count() &&
                  !keepalive_disabled_for(ex);
  }
  lingering_close_ = s.core.lingering_close;
  lingering_time_ms_ = s.core.lingering_time.count();
  lingering_timeout_ms_ = s.core.lingering_timeout.count();
  keepalive_ms_ = s.keepalive_timeout.count();
  keepalive_min_ms_ = s.core.keepalive_min_timeout.count();
  use_sendfile_ = s.sendfile;

  if (keep_alive_ && !nodelay_set_ && s.tcp_nodelay) {
    // Only a connection that stays open needs Nagle off (as nginx does):
    // the last segment of a response must not wait for the next request's ACK.
    int one = 1;
    setsockopt(transport_->fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    nodelay_set_ = true;
  }
  if (!keep_alive_ && !corked_ && s.tcp_nopush && !transport_->is_tls()) {
    // tcp_nopush: the connection closes after this response, so its last
    // segment waits for the FIN and leaves with it (one packet less).
    int one = 1;
    setsockopt(transport_->fd(), IPPROTO_TCP, TCP_CORK, &one, sizeof one);
    corked_ = true;
  }
  trailers_.clear();
  bool bodyless = head.status == 204 || head.status == 304 || (head.status >= 100 && head.status < 200);
  chunked_response_ = head.content_length < 0 && !bodyless && !ex.header_only;
  if (chunked_response_ && (ex.req.version < 11 || !s.core.chunked_transfer_encoding)) {
    // HTTP/1.0 has no chunked coding (and `chunked_transfer_encoding off`
    // asks for none): the end of the body is the close.
    chunked_response_ = false;
    keep_alive_ = false;
  }
  if (ex.req.expect_continue && body_pending_ && keep_alive_ && !continue_sent_) {
    // The client waits for 100 before sending a body we will read and drop.
    out_.append(kContinue);
    continue_sent_ = true;
  }
  if (head.status == 101 && !body_pending_) {
    // Switching protocols: from here on the connection is a byte tunnel.
    // Client bytes reach the handler's body reader undecoded (an endless
    // Content-Length body) and the handler's bytes go out as they are.
    tunnel_ = true;
    keep_alive_ = false;
    chunked_response_ = false;
    body_.start_length(std::numeric_limits<int64_t>::max());
    body_pending_ = true;
    worker_.loop().cancel(timer_);
  }
  SerializeOptions opts;
  opts.version = ex.req.version;
  opts.keep_alive = keep_alive_;
  opts.chunked = chunked_response_;
  opts.head_only = ex.header_only;
  if (ex.server) opts.keepalive_header_s = ex.settings().keepalive_header.count() / 1000;
  ex.header_bytes = int64_t(out_.append_with([&](std::string& out) { serialize_response_head(head, opts, out); }));
}

void Connection::send_body(std::string_view data) {
  if (data.empty() || state_ == State::closed) return;
  schedule_drive();
  if (chunked_response_) {
    out_.append_with([&](std::string& out) { append_chunk_header(data.size(), out); });
    out_.append(data);
    out_.append(kChunkEnd);
  } else {
    out_.append(data);
  }
}

void Connection::send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) {
  if (length <= 0 || state_ == State::closed) return;
  schedule_drive();
  if (chunked_response_) {
    out_.append_with([&](std::string& out) { append_chunk_header(size_t(length), out); });
    out_.append_file(std::move(file), offset, length);
    out_.append(kChunkEnd);
  } else {
    out_.append_file(std::move(file), offset, length);
  }
}

// early_hints: a 103 ahead of the head, to an HTTP/1.1 client only (as
// nginx: HTTP/1.0 has no interim responses); a field that could break the
// framing is left out.
void Connection::send_interim(const http::ResponseHead& head) {
  if (state_ == State::closed || !request_ || request_->exchange.req.version < 11) return;
  interim_bytes_ += out_.append_with([&](std::string& out) {
    out.append("HTTP/1.1 103 Early Hints\r\n");
    for (const auto& [name, value] : head.headers) {
      if (name.empty() || name.find_first_of(":\r\n \t") != std::string::npos ||
          value.find_first_of("\r\n") != std::string::npos)
        continue;
      out.append(name).append(": ").append(value).append("\r\n");
    }
    out.append("\r\n");
  });
  schedule_drive();
}

void Connection::set_trailers(std::vector<std::pair<std::string, std::string>> trailers) {
  // As nginx's chunked filter: whatever the request's TE says (a client
  // that did not ask may drop them, RFC 9112 7.1.2).
  if (state_ == State::closed || !chunked_response_) return;
  trailers_ = std::move(trailers);
}

void Connection::finish() {
  if (state_ == State::closed) return;
  if (chunked_response_ && !trailers_.empty()) {
    out_.append_with([&](std::string& out) { append_last_chunk(trailers_, out); });
    trailers_.clear();
  } else if (chunked_response_) {
    out_.append(kLastChunk);
  }
  if (!keep_alive_ && body_pending_) {
    // Answered (413, an error, an upstream that did not wait) and closing:
    // the rest of the body is nobody's; the lingering close drains it.
    body_pending_ = false;
    body_unread_ = true;
    body_reader_ = nullptr;
    body_paused_ = false;
  }
  schedule_drive();
}

void Connection::abort() {
  if (state_ == State::closed) return;
  // No last chunk: the client must not take a cut response for a whole one.
  keep_alive_ = false;
  body_pending_ = false;
  body_reader_ = nullptr;
  schedule_drive();
}

// The handler is still at work (the proxy waits for its upstream) and the
// socket has news. Bytes are pipelined requests, kept for later. The end of
// the stream means the client went away: the exchange ends (499 in the log,
// the upstream let go) unless the handler ignores that
// (proxy_ignore_client_abort on); then reading stops and the response is
// still written if the client takes it. False if the connection closed.
bool Connection::watch_client() {
  char scratch[kReadChunk];
  while (readable_ && body_in_.size() < in_limit_) {
    auto r = transport_->read(scratch, std::min(sizeof scratch, in_limit_ - body_in_.size()));
    if (r.status == net::IoStatus::ok) {
      body_in_.append(scratch, r.bytes);
      if (r.drained && !peer_closing_) readable_ = false;
      continue;
    }
    if (r.status == net::IoStatus::again) {
      if (transport_->wants_write()) wait_writable();
      readable_ = false;
      break;
    }
    if (r.status == net::IoStatus::eof && request_->exchange.ignore_client_abort) {
      client_eof_ = true;
      keep_alive_ = false;
      readable_ = false;
      break;
    }
    close_now();
    return false;
  }
  return true;
}

void Connection::log_exchange() {
  if (!log_pending_ || !request_) return;
  log_pending_ = false;
  http::Exchange& ex = request_->exchange;
  // What left for the client, not what was queued: a client that goes
  // away mid-response is logged with the bytes it was sent.
  int64_t sent = int64_t(out_.bytes_written() - sent_mark_);
  if (continue_sent_) sent -= int64_t(kContinue.size());
  sent -= int64_t(interim_bytes_);
  ex.body_bytes_sent = std::max<int64_t>(0, sent - ex.header_bytes);
  worker_.access_log().log(ex);
  post_action::after_response(ex);
}

void Connection::finish_request() {
  log_exchange();
  drain_cb_ = nullptr;
  body_reader_ = nullptr;
  tunnel_ = false;
  request_.reset();
  state_ = State::writing;
  arm_timer(keepalive_ms_ > 0 ? std::max<int64_t>(keepalive_ms_, 1) : 60'000);
}

void Connection::start_lingering_close() {
  // Close the write side, then read and drop what the client still sends,
  // so an unread request body cannot make the kernel reset the connection
  // before the client has read our response (lingering_close on). `off`
  // closes at once; `always` lingers even when nothing more is expected.
  using L = config::CoreSettings::LingeringClose;
  const bool more_expected = !body_in_.empty() || readable_ || body_unread_;
  if (lingering_close_ == L::off || (lingering_close_ == L::on && !more_expected) || lingering_time_ms_ <= 0) {
    close_now();
    return;
  }
  transport_->shutdown_write();
  state_ = State::lingering;
  linger_deadline_ = worker_.loop().now_ms() + lingering_time_ms_;
  arm_linger_timer();
}

// As nginx: each read waits lingering_timeout, never past lingering_time.
void Connection::arm_linger_timer() {
  const int64_t left = linger_deadline_ - worker_.loop().now_ms();
  arm_timer(std::max<int64_t>(1, std::min(left, lingering_timeout_ms_)));
}

// keepalive_disable: nginx's msie6 rule (POST only) and safari rule.
bool Connection::keepalive_disabled_for(const http::Exchange& ex) const {
  const uint8_t mask = ex.settings().core.keepalive_disable;
  // The default (msie6) concerns POSTs only: other requests skip the lookup.
  if (mask == 0 || (mask == config::CoreSettings::kMsie6 && ex.req.method != http::Method::post)) return false;
  const http::Header* ua = ex.req.find(http::HeaderToken::user_agent);
  if (ua == nullptr) return false;
  if ((mask & config::CoreSettings::kMsie6) && ex.req.method == http::Method::post && http::is_msie6(ua->value))
    return true;
  return (mask & config::CoreSettings::kSafari) && http::is_safari(ua->value);
}

void Connection::close_now() {
  if (state_ == State::closed) return;
  state_ = State::closed;
  worker_.loop().cancel(timer_);
  if (log_pending_ && request_) {
    // The connection ends before the response did (the client left, a
    // timeout, an error): the request is still logged, as it stands.
    if (!request_->exchange.finished() || !out_.empty()) request_->exchange.client_gone();
    log_exchange();
  }
  transport_.reset();  // closes the socket, which also leaves the epoll set
  worker_.release(this);
}

}  // namespace torii::http1
