#include "handlers/proxy.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/sendfile.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cache/fill.h"
#include "cache/front.h"
#include "cache/ranges.h"
#include "config/cache_config.h"
#include "config/directives.h"
#include "config/proxy_config.h"
#include "config/upstream_bind.h"
#include "config/upstream_config.h"
#include "config/upstream_tls_config.h"
#include "core/ascii.h"
#include "core/event_loop.h"
#include "core/timer_wheel.h"
#include "handlers/proxy_headers.h"
#include "handlers/proxy_http_codec.h"
#include "handlers/upstream_codec.h"
#include "handlers/request_body_buffer.h"
#include "http/date.h"
#include "http/preconditions.h"
#include "handlers/upstream_store.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/pipeline.h"
#include "http/variables.h"
#include "http1/parser.h"
#include "http1/response_parser.h"
#include "log/error_log.h"
#include "net/tls_client.h"
#include "upstream/local_bind.h"
#include "upstream/socket_handler.h"
#include "upstream/try_times.h"
#include "upstream/upstreams.h"

namespace torii::handlers {

namespace {

using config::ProxyConfig;
using http1::BodyFraming;

constexpr size_t kReadChunk = 64 * 1024;
constexpr size_t kStreamedBodyLimit = 64 * 1024;  // client body bytes held before pausing the client

// Why a try failed, as proxy_next_upstream names it.
enum class Failure : uint8_t { error, timeout, invalid_header };

bool idempotent(http::Method m) {
  return m != http::Method::post && m != http::Method::lock && m != http::Method::patch;
}

// proxy_cache_use_stale's name for an upstream status.
uint32_t stale_condition(int status) {
  switch (status) {
    case 500: return config::kStaleHttp500;
    case 502: return config::kStaleHttp502;
    case 503: return config::kStaleHttp503;
    case 504: return config::kStaleHttp504;
    case 403: return config::kStaleHttp403;
    case 404: return config::kStaleHttp404;
    case 429: return config::kStaleHttp429;
    default: return 0;
  }
}

bool carries_content(http::Method m) {
  return m == http::Method::post || m == http::Method::put || m == http::Method::patch;
}

bool reads_request_body(const config::Template& t) {
  for (const auto& p : t.parts)
    if (p.is_variable && (p.variable.id == config::VarId::request_body || p.variable.id == config::VarId::request_body_file))
      return true;
  return false;
}

char* scratch() {
  thread_local std::unique_ptr<char[]> buf(new char[kReadChunk]);
  return buf.get();
}

class ProxySession final : public http::Exchange::HandlerState,
                           public upstream::SocketOwner,
                           public http::BodyReader {
 public:
  // `owned` keeps a per-request config (proxy_pass with variables) alive.
  ProxySession(http::Exchange& ex, const ProxyConfig& cfg, std::shared_ptr<upstream::Group> group,
               std::unique_ptr<UpstreamCodec> codec, std::shared_ptr<const ProxyConfig> owned,
               std::unique_ptr<cache::Fill> fill)
      : owned_cfg_(std::move(owned)),
        fill_(std::move(fill)),
        ex_(ex),
        cfg_(cfg),
        group_(std::move(group)),
        codec_(std::move(codec)),
        loop_(*ex.services().loop),
        timer_(&ProxySession::on_timer, this) {}

  ~ProxySession() override {
    loop_.cancel(timer_);
    close_upstream();
  }

  void start();

  // http::Exchange::HandlerState
  void on_client_gone() override;
  // upstream::SocketOwner
  void on_socket_io(uint32_t events) override;
  // http::BodyReader: the client's request body.
  bool on_body_data(std::string_view data) override;
  void on_body_end() override;
  bool body_too_large();

 private:
  std::shared_ptr<const ProxyConfig> owned_cfg_;
  // proxy_cache's part in this request (cache/fill.h); null without a cache.
  std::unique_ptr<cache::Fill> fill_;
  // *_store's file for this response (upstream_store.h); null when not stored.
  std::unique_ptr<ResponseStore> store_;
  enum class Phase : uint8_t {
    reading_client_body,  // buffering the request body before the first try
    connecting,
    handshaking,  // TLS to an https upstream
    exchanging,  // writing the request, waiting for the response head
    streaming,   // passing the response body on
    tunnel,      // after 101: bytes both ways
    done,
  };

  // Phases.
  void next_try();
  void connect_to(int peer);
  // `readable`: the event that completed the connect also said data came.
  void on_connected(bool readable = false);
  bool bind_source();  // false: failed, the request answered
  void start_codec_output();  // a multiplexed protocol's first bytes on this try's connection
  void start_tls();
  void continue_handshake();
  // The upstream socket, plain or through TLS, with send()/recv()'s
  // results (-1 and errno EAGAIN when it would block; 0: end of stream).
  ssize_t send_upstream(const char* data, size_t len, int flags);
  ssize_t recv_upstream(char* buf, size_t len);
  ssize_t sendfile_upstream(int file_fd, off_t* off, size_t len);
  int64_t try_bytes_sent_ = 0;      // $upstream_bytes_sent of this try
  int64_t try_bytes_received_ = 0;  // $upstream_bytes_received
  // What a multiplexed codec must send after reading (acknowledgements,
  // window updates, body the upstream's window now lets through).
  void pump_codec();
  // The log line's words for a failed I/O call: TLS says what failed itself.
  const char* io_failure(const char* plain, int& err) const;
  void write_request();
  bool send_body_file();
  void send_failed(int err, const char* what);  // a failed write of the request
  void read_head();
  void on_head(size_t head_len);
  void pass_early_hints();  // an upstream 103, on to the client when early_hints allows
  void stream_body(bool drained = false);
  // False: finished or failed. `phase` names the step for log lines.
  bool feed_body(std::string_view data, const char* phase = "reading upstream");
  void finish_response(bool reusable);
  // The connection to the keep-alive pool when the response allows it,
  // else closed.
  void release_connection(bool reusable);
  bool flush_codec_output();
  void start_tunnel();
  void tunnel_io();
  // The failure hook: log, health, retry or respond.
  void try_failed(Failure f, int err, const char* what, const char* phase);
  bool may_retry(uint32_t condition) const;
  // A failed send could be followed by another try (proxy_next_upstream error).
  bool retry_after_send_allowed() const;
  bool has_next() const;  // another server may still be tried
  void respond(int status);
  void accel_redirect(std::string_view target);  // X-Accel-Redirect: the target answers instead
  bool answer_stale(uint32_t condition);  // proxy_cache_use_stale: a stale entry answers instead
  uint32_t stale_cond_ = 0;  // why the last try failed, as proxy_cache_use_stale names it
  void fail_response(const char* what);  // after the head went out: cut the client response

  void close_upstream();
  void record_try(int status);
  void note_try_head(int status);
  void arm(int64_t ms) { loop_.arm(timer_, std::max<int64_t>(ms, 1)); }
  static void on_timer(void* self) { static_cast<ProxySession*>(self)->on_timeout(); }
  void on_timeout();
  void log_upstream(config::LogLevel level, int err, const char* what, const char* phase);
  void log_stderr(const char* phase);  // what the application wrote to its error stream
  std::string upstream_url() const;

  http::Exchange& ex_;
  const ProxyConfig& cfg_;
  std::shared_ptr<upstream::Group> group_;
  std::unique_ptr<UpstreamCodec> codec_;  // the wire protocol
  core::EventLoop& loop_;
  core::Timer timer_;
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);  // guards deferred work
  Phase phase_ = Phase::reading_client_body;

  // The request as it goes upstream.
  std::string head_;
  std::shared_ptr<RequestBodyBuffer> body_;  // buffered body (request buffering); $request_body reads it
  // A streamed body's bytes while they fit client_body_buffer_size: nginx's
  // $request_body has a body that came in its one buffer, unbuffered too.
  std::shared_ptr<RequestBodyBuffer> streamed_copy_;
  int64_t body_file_sent_ = 0;             // of a body in a file, on this try
  size_t record_left_ = 0;                 // of the body record being sent from the file
  std::string record_head_;                // that record's header, while not all sent
  size_t record_head_off_ = 0;
  bool file_tail_queued_ = false;          // the body's end went after the file
  bool streaming_body_ = false;  // proxy_request_buffering off: body passes as it comes
  bool body_done_ = false;       // the client's body has ended
  int64_t body_received_ = 0;    // decoded body bytes from the client so far
  bool body_replayable_ = true;  // a retry can send the whole body again
  bool upgrade_sent_ = false;
  std::string out_;        // bytes for the upstream connection not yet written
  size_t out_off_ = 0;
  bool request_sent_ = false;  // all of the request is written
  bool any_sent_ = false;      // some of it reached the upstream (no retry for non-idempotent)

  // Tries.
  std::vector<uint8_t> tried_;
  unsigned tries_ = 0;
  int64_t first_try_ms_ = 0;
  int64_t try_start_ms_ = 0;
  bool try_noted_ = false;  // this try's address and status are in the lists already
  int64_t connect_ms_ = -1;  // this try's connect and header times, -1 until reached
  int64_t header_ms_ = -1;
  int64_t response_length_ = 0;  // this try's body bytes as the upstream sent them
  int last_status_ = 502;
  int peer_ = -1;
  int fd_ = -1;
  std::unique_ptr<net::TlsClient> tls_;  // https upstream: the TLS layer over fd_
  std::string tls_name_;                 // the name its certificate is checked against
  std::shared_ptr<upstream::SocketHandler> handler_;
  uint64_t conn_requests_ = 0;  // requests served on this upstream connection before this one
  int64_t conn_opened_ms_ = 0;  // when this upstream connection was made (keepalive_time)
  bool answered_ = false;       // some byte of an answer came on this try

  // The response.
  std::string in_;
  http1::ParsedResponse resp_;
  BodyFraming framing_ = BodyFraming::none;
  bool paused_ = false;  // the client's queue is full: wait for its drain
  size_t queue_limit_ = 0;
  bool upstream_eof_ = false;
  // *_limit_rate for this response (0: none): bytes read since its start.
  size_t rate_ = 0;
  int64_t rate_start_ms_ = 0;
  int64_t rate_read_ = 0;
  bool rate_delayed_ = false;  // over the rate: the timer resumes reading
  int64_t rate_allowance() const;
  // force_ranges: the client's one range, cut from the body as it streams.
  cache::StreamedRange client_range_;
};

// ---- start -----------------------------------------------------------------------

void ProxySession::start() {
  ex_.ignore_client_abort = cfg_.ignore_client_abort;
  if (fill_ && !codec_->use_cache_changes(fill_->changes)) fill_->changes.get_for_head = false;
  // As nginx: a response the cache may keep is read to its end even when
  // the client goes away (a HEAD's client leaves once it has the head).
  if (fill_ && fill_->store) ex_.ignore_client_abort = true;
  if (cfg_.store != ProxyConfig::Store::off) ex_.ignore_client_abort = true;  // and *_store, as nginx
  first_try_ms_ = loop_.now_ms();
  tried_.assign(group_->cfg->servers.size(), 0);
  queue_limit_ = cfg_.buffering ? cfg_.buffers_number * cfg_.buffers_size : cfg_.buffer_size;
  const auto& req = ex_.req;
  // proxy_set_body with $request_body in it is rendered once the body is
  // read whole (on_body_end), as nginx reads it before making the request.
  const bool set_body_reads_body = cfg_.has_set_body && ex_.has_body() && reads_request_body(cfg_.set_body);
  if (cfg_.has_set_body && !set_body_reads_body) {
    // proxy_set_body: the rendered string goes instead of the client's
    // body, which the codec reads and drops.
    body_done_ = true;
    const std::string body = http::render(cfg_.set_body, ex_);
    upgrade_sent_ = codec_->request_head(RequestBody::length, int64_t(body.size()), head_);
    codec_->body_piece(body, head_);
    next_try();
    return;
  }
  bool has_body = (cfg_.pass_request_body || set_body_reads_body) && ex_.has_body();
  // HTTP/1.0 upstreams cannot take a chunked body (nor FastCGI or uwsgi
  // applications, which are told the length first): it is read whole first.
  streaming_body_ = has_body && !cfg_.request_buffering && !set_body_reads_body &&
                    (req.content_length >= 0 || codec_->streams_unknown_length());
  if (!has_body) {
    body_done_ = true;
    // An empty body still has a length: the client gave one, or the method
    // carries content (RFC 9110 8.6; servers answer a POST without one 411).
    const bool empty_body = cfg_.pass_request_body && (req.content_length == 0 || carries_content(req.method));
    upgrade_sent_ = codec_->request_head(empty_body ? RequestBody::length : RequestBody::none, 0, head_);
    next_try();  // a body not passed on is read and dropped by the codec
    return;
  }
  if (streaming_body_) {
    upgrade_sent_ = codec_->request_head(req.content_length < 0 ? RequestBody::chunked : RequestBody::length,
                                         req.content_length, head_);
    const size_t memory = ex_.settings().client_body_buffer_size;
    if (req.content_length < 0 || req.content_length <= int64_t(memory))
      streamed_copy_ = std::make_shared<RequestBodyBuffer>(memory, std::string());
    ex_.read_body(this);
    if (phase_ == Phase::reading_client_body) next_try();
    return;
  }
  phase_ = Phase::reading_client_body;
  const auto& settings = ex_.settings();
  using InFile = config::CoreSettings::BodyInFileOnly;
  const auto in_file = settings.core.client_body_in_file_only;
  body_ = std::make_shared<RequestBodyBuffer>(
      settings.client_body_buffer_size, settings.client_body_temp_path, settings.client_body_temp_levels,
      in_file == InFile::on      ? RequestBodyBuffer::FileOnly::keep
      : in_file == InFile::clean ? RequestBodyBuffer::FileOnly::clean
                                 : RequestBodyBuffer::FileOnly::off);
  ex_.read_body(this);  // on_body_end starts the first try
}

bool ProxySession::on_body_data(std::string_view data) {
  if (phase_ == Phase::tunnel) {
    out_.append(data);
    if (fd_ >= 0) write_request();
    return out_.size() - out_off_ < kStreamedBodyLimit;
  }
  if (phase_ == Phase::done) return true;  // answered already: dropped
  body_received_ += int64_t(data.size());
  if (body_too_large()) return false;  // no more of it is read
  // The upstream answered: the rest is dropped, unless the protocol
  // streams both ways (gRPC).
  if (phase_ == Phase::streaming && !codec_->full_duplex()) return true;
  if (!streaming_body_) {
    if (!body_->append(data)) {
      TORII_LOG(crit, "%s in \"%s\" failed (%d: %s), client: %s", body_->what(), body_->temp_dir().c_str(), errno,
                strerror(errno), ex_.conn().remote_addr.c_str());
      respond(500);  // what else comes is read and dropped
    }
    return true;
  }
  if (streamed_copy_ && (streamed_copy_->size() + int64_t(data.size()) > int64_t(ex_.settings().client_body_buffer_size) ||
                         !streamed_copy_->append(data)))
    streamed_copy_.reset();
  // Streamed: bytes that reach the upstream are gone, so no retry after,
  // unless the codec still holds the whole body.
  codec_->body_piece(data, out_);
  body_replayable_ = codec_->holds_whole_body();
  if (fd_ >= 0 && (phase_ == Phase::exchanging || phase_ == Phase::streaming)) write_request();
  return out_.size() - out_off_ + codec_->buffered() < kStreamedBodyLimit;
}

// client_max_body_size for a body whose length was not given (chunked,
// HTTP/2 without content-length): checked as the decoded size passes the
// limit. Before any response, 413 (and the upstream, if contacted, is let
// go); after one started, the client's response is cut.
bool ProxySession::body_too_large() {
  const int64_t limit = ex_.settings().client_max_body_size;
  if (limit <= 0 || body_received_ <= limit) return false;
  TORII_LOG_EX(ex_, error, "client intended to send too large chunked body: %lld+ bytes%s",
            static_cast<long long>(body_received_), http::log_context(ex_).c_str());
  body_.reset();
  ex_.close_connection = true;
  if (!ex_.head_sent()) {
    respond(413);
    return true;
  }
  loop_.cancel(timer_);
  close_upstream();
  phase_ = Phase::done;
  ex_.abort();
  return true;
}

void ProxySession::on_body_end() {
  if (phase_ == Phase::tunnel || body_done_) return;
  body_done_ = true;
  if (streaming_body_) {
    ex_.request_body = std::move(streamed_copy_);
    codec_->body_end(out_);
    if (fd_ >= 0 && (phase_ == Phase::exchanging || phase_ == Phase::streaming)) write_request();
    return;
  }
  if (phase_ != Phase::reading_client_body) return;
  if (!body_->file_name().empty())  // client_body_in_file_only: nginx says where, at notice
    TORII_LOG_EX(ex_, notice, "a client request body is buffered to a temporary file %s%s", body_->file_name().c_str(),
              http::log_context(ex_).c_str());
  if (ex_.req.content_length < 0) ex_.body_length_read = body_->size();
  ex_.request_body = body_;
  if (cfg_.has_set_body) {  // proxy_set_body that reads the body: it goes instead
    const std::string body = http::render(cfg_.set_body, ex_);
    upgrade_sent_ = codec_->request_head(RequestBody::length, int64_t(body.size()), head_);
    codec_->body_piece(body, head_);
    body_.reset();
    next_try();
    return;
  }
  upgrade_sent_ = codec_->request_head(RequestBody::length, body_->size(), head_);
  next_try();
}

// ---- pick and connect -------------------------------------------------------

void ProxySession::next_try() {
  close_upstream();
  int64_t now = loop_.now_ms();
  if (tries_ > 0) {
    bool out_of_tries = cfg_.next_upstream_tries && tries_ >= cfg_.next_upstream_tries;
    bool out_of_time = cfg_.next_upstream_timeout.count() && now - first_try_ms_ >= cfg_.next_upstream_timeout.count();
    if (out_of_tries || out_of_time) {
      respond(last_status_);
      return;
    }
  }
  std::string key;
  upstream::PickInput in;
  in.client = &ex_.conn().peer;
  if (group_->cfg->balancer == config::UpstreamGroupConfig::Balancer::hash) {
    http::render(group_->cfg->hash_key, ex_, key);
    in.hash_key = key;
  }
  int peer = group_->state.pick(in, tried_, now);
  if (peer < 0) {
    // Servers left untried but none available (failed, at max_conns):
    // nginx's "no live upstreams", the group's name as the try's address
    // and a 502; once every server was tried (those marked `down` never
    // count), the last try's answer.
    bool untried_left = false;
    for (size_t i = 0; i < tried_.size(); ++i)
      if (!tried_[i] && !group_->cfg->servers[i].down) untried_left = true;
    if (tries_ == 0 || untried_left) {
      peer_ = -1;
      log_upstream(config::LogLevel::error, 0, "no live upstreams", "connecting to upstream");
      ex_.upstream_addr += ex_.upstream_addr.empty() ? "" : ", ";
      ex_.upstream_addr += group_->cfg->name;
      if (tries_ == 0) stale_cond_ = config::kStaleError;
      respond(502);
    } else {
      respond(last_status_);
    }
    return;
  }
  ++tries_;
  tried_[size_t(peer)] = 1;
  connect_to(peer);
}

void ProxySession::connect_to(int peer) {
  peer_ = peer;
  try_start_ms_ = loop_.now_ms();
  try_bytes_sent_ = try_bytes_received_ = 0;
  connect_ms_ = header_ms_ = -1;
  response_length_ = 0;
  const auto& server = group_->cfg->servers[size_t(peer)];
  group_->state.acquire(peer);
  // Either the request again from the start, or (streaming) what is left.
  if (!streaming_body_) {
    out_ = head_;
    if (body_ && !body_->in_file()) codec_->body_piece(body_->memory(), out_);
    // A body in a file is sent after the head, its end after it.
    if (!body_ || !body_->in_file()) codec_->body_end(out_);
    body_file_sent_ = 0;
    record_left_ = 0;
    record_head_.clear();
    record_head_off_ = 0;
    file_tail_queued_ = false;
  } else if (tries_ == 1) {
    out_.insert(0, head_);  // body bytes that came while picking follow the head
  } else {
    out_ = head_;  // a retry of a streamed body happens only before any body byte came
  }
  out_off_ = 0;
  request_sent_ = false;
  in_.clear();
  codec_->reset();
  upstream_eof_ = false;
  answered_ = false;

  if (group_->pool.enabled()) {
    // A request that could not go again, should the connection turn out
    // closed, looks at it first (a peek).
    auto kept = group_->pool.take(peer, !retry_after_send_allowed());
    // A connection made for another scheme or other proxy_ssl_* settings
    // (a group shared by several locations) is not this request's.
    // So is one whose protocol state (HTTP/2's session) this codec cannot
    // take on; on success the codec owns that state.
    const bool fits = (kept.tls != nullptr) == cfg_.ssl && (!kept.tls || kept.tls->context() == cfg_.tls->ctx.get());
    if (kept.fd >= 0 && !(fits && codec_->adopt_connection(kept.state))) upstream::close_connection(loop_, kept);
    if (kept.fd >= 0) {
      fd_ = kept.fd;
      tls_ = std::move(kept.tls);
      conn_requests_ = kept.requests;
      conn_opened_ms_ = kept.opened_ms;
      start_codec_output();
      handler_ = std::move(kept.handler);
      handler_->set_owner(this);  // registered already: no epoll_ctl
      on_connected();
      return;
    }
  }
  conn_requests_ = 0;
  conn_opened_ms_ = loop_.now_ms();
  std::unique_ptr<upstream::ConnectionState> none;
  codec_->adopt_connection(none);  // a new connection
  start_codec_output();
  handler_ = std::make_shared<upstream::SocketHandler>(this);
  int fd = ::socket(server.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    int err = errno;
    log_upstream(config::LogLevel::alert, err, "socket() failed", "connecting to upstream");
    group_->state.release(peer);
    peer_ = -1;
    respond(502);
    return;
  }
  fd_ = fd;
  if (server.addr.ss_family != AF_UNIX) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  // *_socket_rcvbuf, *_socket_sndbuf: as nginx's connect, a refusal is
  // logged and the connection goes on with the system's size.
  for (const auto& [option, name, size] : {std::tuple{SO_RCVBUF, "SO_RCVBUF", cfg_.socket_rcvbuf},
                                           std::tuple{SO_SNDBUF, "SO_SNDBUF", cfg_.socket_sndbuf}}) {
    if (size == 0) continue;
    if (setsockopt(fd, SOL_SOCKET, option, &size, sizeof size) != 0) {
      const std::string what = std::string("setsockopt(") + name + ", " + std::to_string(size) + ") failed, ignored";
      log_upstream(config::LogLevel::alert, errno, what.c_str(), "connecting to upstream");
    }
  }
  if (cfg_.socket_keepalive) {
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one) != 0)
      log_upstream(config::LogLevel::alert, errno, "setsockopt(SO_KEEPALIVE) failed", "connecting to upstream");
  }
  if (cfg_.bind && server.addr.ss_family != AF_UNIX && !bind_source()) return;
  loop_.add(fd, handler_.get(), EPOLLIN | EPOLLOUT | EPOLLRDHUP);
  int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&server.addr), server.addr_len);
  if (rc == 0) {
    on_connected();
    return;
  }
  if (errno != EINPROGRESS) {
    try_failed(Failure::error, errno, "connect() failed", "connecting to upstream");
    return;
  }
  phase_ = Phase::connecting;
  arm(cfg_.connect_timeout.count());
}

// *_bind: the source address, rendered when it has variables (empty: none;
// not an address: logged and none, as nginx). A failure answers 500.
bool ProxySession::bind_source() {
  const config::UpstreamBind& b = *cfg_.bind;
  sockaddr_storage addr = b.addr;
  socklen_t len = b.addr_len;
  std::string name = b.name;
  if (!b.value.empty()) {
    name = http::render(b.value, ex_);
    if (name.empty()) return true;
    if (!config::upstream_bind_address(name, addr, len)) {
      TORII_LOG_EX(ex_, error, "invalid local address \"%s\"%s", name.c_str(), http::log_context(ex_, upstream_url()).c_str());
      return true;
    }
  }
  upstream::BindFailure failure;
  if (upstream::bind_local(fd_, addr, len, b.transparent, name, failure)) return true;
  log_upstream(failure.level, failure.err, failure.what.c_str(), "connecting to upstream");
  respond(500);
  return false;
}

void ProxySession::start_codec_output() {
  if (!codec_->full_duplex()) return;
  // A multiplexed protocol's bytes depend on the connection (a new one
  // starts with its preface): the request and the body kept so far.
  out_.clear();
  codec_->take_output(out_);
}

// Events that mean the upstream socket has something to read (or an end).
constexpr uint32_t kReadable = EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR;

void ProxySession::on_connected(bool readable) {
  if (cfg_.ssl && !tls_) {
    start_tls();
    return;
  }
  connect_ms_ = loop_.now_ms() - try_start_ms_;
  phase_ = Phase::exchanging;
  arm(cfg_.send_timeout.count());
  write_request();
  // The answer comes later, with its own EPOLLIN edge (the socket was
  // registered before the request left): reading now would only find
  // EAGAIN, a wasted system call per request.
  if (readable && phase_ == Phase::exchanging && fd_ >= 0) read_head();
}

// ---- TLS to the upstream -------------------------------------------------------

void ProxySession::start_tls() {
  const config::UpstreamTlsConfig& t = *cfg_.tls;
  // proxy_ssl_name, else the host of proxy_pass; a port is not part of it.
  std::string name;
  if (!t.name.empty()) {
    http::render(t.name, ex_, name);
  } else {
    name = cfg_.proxy_host;
  }
  name = net::tls_server_name(name);
  tls_name_ = name;
  std::string error;
  auto slot = t.session_reuse ? group_->tls_session(t.ctx.get(), peer_) : nullptr;
  tls_ = net::TlsClient::start(t.ctx.get(), fd_, t.server_name ? name : std::string(), std::move(slot), error,
                               codec_->alpn());
  if (!tls_) {
    try_failed(Failure::error, 0, error.c_str(), "SSL handshaking to upstream");
    return;
  }
  phase_ = Phase::handshaking;
  arm(cfg_.connect_timeout.count());
  continue_handshake();
}

void ProxySession::continue_handshake() {
  auto r = tls_->handshake();
  if (r.status == net::IoStatus::again) return;  // the socket's next readiness resumes it
  if (r.status != net::IoStatus::ok) {
    try_failed(Failure::error, 0, tls_->error().c_str(), "SSL handshaking to upstream");
    return;
  }
  if (cfg_.tls->verify) {
    const std::string why = tls_->verify(tls_name_);
    if (!why.empty()) {
      // A session from a server that failed the check is not offered again.
      if (cfg_.tls->session_reuse) group_->tls_session(cfg_.tls->ctx.get(), peer_)->clear();
      try_failed(Failure::error, 0, why.c_str(), "SSL handshaking to upstream");
      return;
    }
  }
  on_connected();
}

ssize_t ProxySession::send_upstream(const char* data, size_t len, int flags) {
  ssize_t n = -1;
  if (!tls_) {
    n = ::send(fd_, data, len, flags | MSG_NOSIGNAL);
  } else {
    const auto r = tls_->write(data, len);
    if (r.status == net::IoStatus::ok) n = ssize_t(r.bytes);
    if (r.status == net::IoStatus::again) errno = EAGAIN;  // else errno set by the TLS layer
  }
  if (n > 0) try_bytes_sent_ += n;
  return n;
}

ssize_t ProxySession::recv_upstream(char* buf, size_t len) {
  ssize_t n = -1;
  if (!tls_) {
    n = ::recv(fd_, buf, len, 0);
  } else {
    const auto r = tls_->read(buf, len);
    switch (r.status) {
      case net::IoStatus::ok: n = ssize_t(r.bytes); break;
      case net::IoStatus::again: errno = EAGAIN; break;
      case net::IoStatus::eof: n = 0; break;
      case net::IoStatus::error: break;
    }
  }
  if (n > 0) try_bytes_received_ += n;
  return n;
}

// Over TLS the file's bytes are read and sealed: a piece at a time, the
// same piece again after the socket was full (OpenSSL wants the retry).
ssize_t ProxySession::sendfile_upstream(int file_fd, off_t* off, size_t len) {
  if (!tls_) {
    const ssize_t n = ::sendfile(fd_, file_fd, off, len);
    if (n > 0) try_bytes_sent_ += n;
    return n;
  }
  const ssize_t got = ::pread(file_fd, scratch(), std::min(len, kReadChunk), *off);
  if (got <= 0) return got;
  const ssize_t n = send_upstream(scratch(), size_t(got), 0);
  if (n > 0) *off += n;
  return n;
}

void ProxySession::pump_codec() {
  if (!codec_->full_duplex() || fd_ < 0) return;
  codec_->take_output(out_);
  if (out_off_ < out_.size()) {
    write_request();
  } else if (streaming_body_ && !body_done_ && codec_->buffered() < kStreamedBodyLimit) {
    ex_.resume_body();
  }
}

const char* ProxySession::io_failure(const char* plain, int& err) const {
  if (!tls_ || tls_->error().empty()) return plain;
  err = 0;
  return tls_->error().c_str();
}

void ProxySession::on_socket_io(uint32_t events) {
  switch (phase_) {
    case Phase::connecting: {
      int err = 0;
      socklen_t len = sizeof err;
      if (getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (err) {
        try_failed(Failure::error, err, "connect() failed", "connecting to upstream");
        return;
      }
      if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return;
      on_connected(events & kReadable);
      return;
    }
    case Phase::handshaking:
      continue_handshake();
      return;
    case Phase::exchanging:
      if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) write_request();
      // Reads drain the socket to EAGAIN, so a write-only edge has nothing new.
      if ((events & kReadable) && phase_ == Phase::exchanging && fd_ >= 0) read_head();
      return;
    case Phase::streaming:
      if (out_off_ < out_.size()) write_request();
      if (!paused_ && phase_ == Phase::streaming) stream_body();
      return;
    case Phase::tunnel:
      tunnel_io();
      return;
    default:
      return;
  }
}

// ---- send the request --------------------------------------------------------

void ProxySession::write_request() {
  while (out_off_ < out_.size()) {
    ssize_t n = send_upstream(out_.data() + out_off_, out_.size() - out_off_, 0);
    if (n > 0) {
      out_off_ += size_t(n);
      any_sent_ = true;
      if (phase_ != Phase::tunnel) arm(cfg_.send_timeout.count());
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (phase_ == Phase::tunnel) {
      close_upstream();
      ex_.abort();
      phase_ = Phase::done;
      return;
    }
    int err = errno;
    const char* what = io_failure("send() failed", err);
    send_failed(err, what);
    return;
  }
  out_.clear();
  out_off_ = 0;
  if (phase_ == Phase::tunnel) {
    ex_.resume_body();
    return;
  }
  if (!send_body_file()) return;
  if (body_ && body_->in_file() && !file_tail_queued_) {
    file_tail_queued_ = true;
    codec_->body_end(out_);
    if (!out_.empty()) {
      write_request();
      return;
    }
  }
  if (streaming_body_ && !body_done_) {
    if (codec_->buffered() < kStreamedBodyLimit) ex_.resume_body();
    return;
  }
  if (!request_sent_) {
    request_sent_ = true;
    arm(cfg_.read_timeout.count());
  }
}

// The buffered body from its temporary file, after the head. False while
// the socket is full or after a failed send (handled here).
bool ProxySession::send_body_file() {
  if (!body_ || !body_->in_file()) return true;
  const size_t record_max = codec_->body_record_max();
  while (body_file_sent_ < body_->size() || record_head_off_ < record_head_.size()) {
    if (record_head_off_ < record_head_.size()) {
      const ssize_t n = send_upstream(record_head_.data() + record_head_off_,
                                      record_head_.size() - record_head_off_, MSG_MORE);
      if (n > 0) {
        record_head_off_ += size_t(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
      int err = errno;
      const char* what = io_failure("send() failed", err);
      send_failed(err, what);
      return false;
    }
    if (record_max && record_left_ == 0) {
      // A framed body (FastCGI STDIN): each piece of the file is a record.
      record_left_ = size_t(std::min<int64_t>(int64_t(record_max), body_->size() - body_file_sent_));
      record_head_.clear();
      record_head_off_ = 0;
      codec_->body_record_header(record_left_, record_head_);
      continue;
    }
    off_t off = body_file_sent_;
    const size_t want = record_max ? record_left_ : size_t(body_->size() - body_file_sent_);
    const ssize_t n = sendfile_upstream(body_->fd(), &off, want);
    if (n > 0) {
      body_file_sent_ += n;
      if (record_max) record_left_ -= size_t(n);
      arm(cfg_.send_timeout.count());
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    int err = n == 0 ? EIO : errno;  // 0: the file shrank, which cannot happen to ours
    const char* what = io_failure("sendfile() failed", err);
    send_failed(err, what);
    return false;
  }
  return true;
}

void ProxySession::send_failed(int err, const char* what) {
  read_head();  // the upstream may already have answered (and closed): that comes first
  if (phase_ == Phase::exchanging && fd_ >= 0) try_failed(Failure::error, err, what, "sending request to upstream");
}

// ---- read the response head ----------------------------------------------------

void ProxySession::read_head() {
  while (phase_ == Phase::exchanging) {
    // Read into scratch and keep what came: a head is usually a few hundred
    // bytes, and growing in_ first would allocate and zero the whole room.
    const size_t room = std::min(std::max<size_t>(cfg_.buffer_size, 4096), kReadChunk);
    ssize_t n = recv_upstream(scratch(), room);
    if (n > 0) {
      in_.append(scratch(), size_t(n));
      answered_ = true;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      int err = errno;
      const char* what = io_failure("recv() failed", err);
      try_failed(Failure::error, err, what, "reading response header from upstream");
      return;
    }
    if (n == 0) {
      try_failed(Failure::error, 0, "upstream prematurely closed connection", "reading response header from upstream");
      return;
    }
    if (request_sent_) arm(cfg_.read_timeout.count());  // the limit is between two reads
    while (phase_ == Phase::exchanging) {
      size_t consumed = 0;
      auto st = codec_->parse_head(in_, resp_, consumed);
      log_stderr("reading response header from upstream");
      if (st == http1::ParseStatus::need_more) {
        in_.erase(0, consumed);  // what the codec keeps itself (HTTP's parser takes nothing: it rereads)
        pump_codec();
        break;
      }
      if (st == http1::ParseStatus::error) {
        // A request the upstream says it did not act on fails as a
        // connection would, and may go again (try_failed).
        try_failed(codec_->unprocessed() ? Failure::error : Failure::invalid_header, 0, codec_->error(),
                   "reading response header from upstream");
        return;
      }
      if (resp_.status >= 100 && resp_.status < 200 && resp_.status != 101 && codec_->interim_responses()) {
        if (resp_.status == 103) pass_early_hints();
        in_.erase(0, consumed);  // interim response: the real one follows
        codec_->reset();
        continue;
      }
      on_head(consumed);
      return;
    }
  }
}

// An upstream's 103 Early Hints: its fields, as the head's are filtered,
// to the client if the location's early_hints allows (Exchange decides).
void ProxySession::pass_early_hints() {
  if (ex_.settings().early_hints.empty()) return;
  http::ResponseHead hints;
  hints.status = 103;
  for (const auto& h : resp_.headers)
    if (field_passes(cfg_, h.name)) hints.add(std::string(h.name), std::string(h.value));
  if (!hints.headers.empty()) ex_.send_early_hints(hints);
}

void ProxySession::on_head(size_t head_len) {
  header_ms_ = loop_.now_ms() - try_start_ms_;
  stale_cond_ = 0;  // this try answered
  const int status = resp_.status;
  group_->state.responded(peer_, status);
  // proxy_next_upstream http_*: another server may do better.
  uint32_t cond = 0;
  switch (status) {
    case 500: cond = config::kNextHttp500; break;
    case 502: cond = config::kNextHttp502; break;
    case 503: cond = config::kNextHttp503; break;
    case 504: cond = config::kNextHttp504; break;
    case 403: cond = config::kNextHttp403; break;
    case 404: cond = config::kNextHttp404; break;
    case 429: cond = config::kNextHttp429; break;
    default: break;
  }
  if (cond && (cfg_.next_upstream & cond) && may_retry(cond) && has_next()) {
    record_try(status);
    if (status >= 500) group_->state.failed(peer_, loop_.now_ms());
    last_status_ = status;
    stale_cond_ = stale_condition(status);
    next_try();
    return;
  }
  if (status == 101 && !upgrade_sent_) {
    try_failed(Failure::invalid_header, 0, "upstream sent unexpected 101 response", "reading response header from upstream");
    return;
  }
  group_->state.succeeded(peer_);

  if (ex_.config && ex_.config->keep_upstream_headers) http::keep_upstream_headers(ex_, resp_.headers);
  if (fill_ && fill_->on_head(ex_, resp_)) {
    // A 304 revalidated the stored response, or use_stale covers this
    // status: the stored response answers.
    record_try(status);
    close_upstream();
    loop_.cancel(timer_);
    phase_ = Phase::done;
    fill_->send_stale(ex_, cfg_);
    return;
  }

  // proxy_intercept_errors: the location's error_page answers instead
  // (memcached's miss always). An empty answer read to its end leaves the
  // connection for the next request, as nginx's keepalive does.
  const auto& pages = ex_.settings().error_pages;
  const bool intercepted =
      (cfg_.intercept_404 && status == 404) ||
      (cfg_.intercept_errors && status >= 300 && std::any_of(pages.begin(), pages.end(), [status](const auto& ep) {
         return std::find(ep.codes.begin(), ep.codes.end(), status) != ep.codes.end();
       }));
  if (intercepted) {
    // As nginx: an intercepted 401 keeps the upstream's challenge, for
    // the error page or redirect that answers instead.
    if (status == 401)
      for (const auto& h : resp_.headers)
        if (core::iequals(h.name, "www-authenticate")) ex_.response.add("WWW-Authenticate", std::string(h.value));
    record_try(status);
    loop_.cancel(timer_);
    release_connection(resp_.content_length == 0 && in_.size() == head_len);
    respond(status);
    return;
  }

  if (const auto target = accel_redirect_target(cfg_, resp_); !target.empty()) {
    accel_redirect(target);
    return;
  }

  // X-Accel-Buffering switches proxy_buffering for this response, as
  // nginx's proxy, FastCGI and uwsgi modules let it (gRPC never buffers):
  // here, how much a slow client may leave queued.
  bool buffering = cfg_.buffering && !codec_->full_duplex();
  if (!codec_->full_duplex()) {
    if (const int accel = accel_buffering(cfg_, resp_); accel >= 0) {
      buffering = accel;
      queue_limit_ = buffering ? cfg_.buffers_number * cfg_.buffers_size : cfg_.buffer_size;
    }
  }
  // nginx paces only a buffered response (its event pipe).
  rate_ = buffering ? cfg_.limit_rate : 0;
  rate_start_ms_ = loop_.now_ms();
  rate_read_ = 0;
  rate_delayed_ = false;

  // A HEAD the cache sent as GET gets the body, which only the cache keeps.
  const bool head_request = ex_.req.method == http::Method::head && !(fill_ && fill_->changes.get_for_head);
  framing_ = codec_->start_body(resp_, head_request);
  http::ResponseHead head;
  build_response_head(ex_, cfg_, resp_, framing_, head);
  // force_ranges: nginx's range filter with single_range, which answers a
  // 200 of known length with Accept-Ranges, or one range of it.
  if (cfg_.force_ranges && !fill_ && status == 200 && head.content_length >= 0) {
    head.remove("Accept-Ranges");
    if (ex_.settings().core.max_ranges != 0) {
      head.add("Accept-Ranges", "bytes");
      const auto range = client_range_.start(ex_, head);
      if (range == cache::StreamedRange::Outcome::part) head.remove("Accept-Ranges");
      if (range == cache::StreamedRange::Outcome::unsatisfiable) {
        record_try(status);
        respond(416);
        return;
      }
    }
  }
  // nginx stores only what its buffered pipe reads, never a HEAD's answer.
  if (buffering && !head_request) store_ = ResponseStore::begin(ex_, cfg_, resp_);
  // A response the cache keeps meets the client's preconditions now, as
  // nginx's not-modified filter does for a cacheable response: a 304 goes
  // out while the whole body still fills the cache; a 412 stores nothing.
  if (fill_ && fill_->storing() && status == 200) {
    const std::string* etag = head.find("ETag");
    const std::string* lm = head.find("Last-Modified");
    const auto modified = lm ? http::parse_http_date(*lm) : std::nullopt;
    const int pre = http::evaluate_preconditions(ex_, etag ? std::string_view(*etag) : std::string_view(),
                                                 modified ? *modified : -1);
    if (pre == 412) {
      record_try(status);
      respond(412);
      return;
    }
    if (pre == 304) head.status = 304;
  }
  if (fill_ && fill_->storing() && head.status == 200 &&
      fill_->client_range.start(ex_, head) == cache::StreamedRange::Outcome::unsatisfiable) {
    record_try(status);  // as nginx: a 416, and the response is not stored
    respond(416);
    return;
  }
  in_.erase(0, head_len);  // resp_'s views are dead from here on
  note_try_head(status);
  if (status == 101) {
    ex_.send_head(std::move(head));
    start_tunnel();
    return;
  }
  ex_.send_head(std::move(head));
  phase_ = Phase::streaming;
  arm(cfg_.read_timeout.count());
  // What came with the head (or what the codec kept of it) first; the
  // response may end right here.
  std::string first;
  first.swap(in_);
  // nginx's unbuffered path reads this with the head; its buffered one
  // hands it to the pipe that reads the rest.
  if (!feed_body(first, buffering ? "reading upstream" : "reading response header from upstream")) return;
  stream_body();
}

// ---- stream the response body ----------------------------------------------------

// Passes body bytes on; false once the response is finished or failed.
bool ProxySession::feed_body(std::string_view data, const char* phase) {
  size_t consumed = 0;
  auto st = codec_->feed_body(data, consumed, [this](std::string_view d) {
    if (store_) store_->on_body(d);
    if (!fill_) return ex_.send_body(client_range_.cut(d));
    fill_->on_body(d);
    ex_.send_body(fill_->client_range.cut(d));
  });
  response_length_ += int64_t(consumed);
  log_stderr(phase);
  if (phase_ != Phase::streaming) return false;  // the client went away meanwhile
  if (st == UpstreamCodec::Body::done) {
    std::vector<std::pair<std::string, std::string>> trailers;
    if (codec_->take_trailers(trailers)) ex_.set_trailers(std::move(trailers));
  } else if (st == UpstreamCodec::Body::more) {
    pump_codec();
    if (phase_ != Phase::streaming) return false;
  }
  if (st == UpstreamCodec::Body::error) {
    log_upstream(config::LogLevel::error, 0, codec_->error(), "reading upstream");
    fail_response(nullptr);
    return false;
  }
  if (st == UpstreamCodec::Body::done) {
    // Bytes after the end of the body: the connection is not reusable.
    finish_response(consumed == data.size());
    return false;
  }
  return true;
}

// Bytes the rate lets be read now: a second's worth at the start, then
// the rate over the time since (nginx's pipe, counted in milliseconds).
int64_t ProxySession::rate_allowance() const {
  return int64_t(rate_) * (loop_.now_ms() - rate_start_ms_) / 1000 + int64_t(rate_) - rate_read_;
}

void ProxySession::stream_body(bool drained) {
  while (phase_ == Phase::streaming) {
    if (rate_delayed_) return;
    const int64_t allowed = rate_ ? rate_allowance() : INT64_MAX;
    if (allowed <= 0) {
      rate_delayed_ = true;
      arm(-allowed * 1000 / int64_t(rate_) + 1);
      return;
    }
    // Once drained, read at least once: the codec's low mark may be above
    // queue_limit_ (proxy_buffering off), and waiting again at once would
    // spin on a drain callback that fires straight back.
    if (!drained && ex_.queued_bytes() >= queue_limit_) {
      // The client is slower than the upstream: stop reading until the
      // queue drains, so memory stays within proxy_buffers.
      paused_ = true;
      loop_.cancel(timer_);
      std::weak_ptr<char> alive = alive_;
      ex_.set_drain_callback([this, alive] {
        if (alive.expired() || phase_ != Phase::streaming) return;
        paused_ = false;
        arm(cfg_.read_timeout.count());
        stream_body(true);
      });
      return;
    }
    drained = false;
    const size_t queued = ex_.queued_bytes();
    size_t room = std::min(kReadChunk, std::max<size_t>(queue_limit_ > queued ? queue_limit_ - queued : 0, 4096));
    room = size_t(std::min<int64_t>(int64_t(room), allowed));
    ssize_t n = recv_upstream(scratch(), room);
    if (n > 0) {
      rate_read_ += n;
      arm(cfg_.read_timeout.count());
      if (!feed_body(std::string_view(scratch(), size_t(n)))) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n == 0 && codec_->ends_at_eof()) {
      finish_response(false);
      return;
    }
    if (n == 0) {
      log_upstream(config::LogLevel::error, 0, "upstream prematurely closed connection", "reading upstream");
    } else {
      int err = errno;
      const char* what = io_failure("recv() failed", err);
      log_upstream(config::LogLevel::error, err, what, "reading upstream");
    }
    fail_response(nullptr);
    return;
  }
}

void ProxySession::finish_response(bool reusable) {
  loop_.cancel(timer_);
  record_try(resp_.status);
  phase_ = Phase::done;
  release_connection(reusable);
  if (fill_) fill_->commit();
  if (store_) store_->commit(ex_);
  store_.reset();
  ex_.finish();
}

void ProxySession::release_connection(bool reusable) {
  reusable = reusable && codec_->reusable(resp_) && request_sent_ && group_->pool.enabled() &&
             conn_requests_ + 1 < group_->cfg->keepalive_requests &&
             loop_.now_ms() - conn_opened_ms_ < group_->cfg->keepalive_time.count();
  if (reusable && fd_ >= 0) reusable = flush_codec_output();
  if (reusable && fd_ >= 0) {
    group_->state.release(peer_);
    group_->pool.put({fd_, std::move(handler_), std::move(tls_), conn_requests_ + 1, conn_opened_ms_,
                      codec_->detach_connection()},
                     peer_);
    fd_ = -1;
    peer_ = -1;
  } else {
    close_upstream();
  }
}

// What a multiplexed protocol still owes the connection after the
// response (acknowledgements, window updates) goes out before it is kept:
// false if the socket does not take it all now.
bool ProxySession::flush_codec_output() {
  if (!codec_->full_duplex()) return true;
  codec_->take_output(out_);
  while (out_off_ < out_.size()) {
    const ssize_t n = send_upstream(out_.data() + out_off_, out_.size() - out_off_, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out_off_ += size_t(n);
  }
  out_.clear();
  out_off_ = 0;
  return true;
}

void ProxySession::fail_response(const char*) {
  store_.reset();  // a response cut short is not stored
  loop_.cancel(timer_);
  record_try(resp_.status ? resp_.status : 502);
  group_->state.failed(peer_, loop_.now_ms());
  close_upstream();
  phase_ = Phase::done;
  ex_.abort();
}

// ---- tunnel (101) ----------------------------------------------------------------

void ProxySession::start_tunnel() {
  record_try(101);
  phase_ = Phase::tunnel;
  arm(cfg_.read_timeout.count());
  out_.clear();
  out_off_ = 0;
  if (!in_.empty()) {
    ex_.send_body(in_);
    in_.clear();
  }
  ex_.read_body(this);
  tunnel_io();
}

void ProxySession::tunnel_io() {
  if (phase_ != Phase::tunnel) return;
  if (out_off_ < out_.size()) write_request();
  while (phase_ == Phase::tunnel) {
    if (ex_.queued_bytes() >= kStreamedBodyLimit) {
      std::weak_ptr<char> alive = alive_;
      ex_.set_drain_callback([this, alive] {
        if (!alive.expired()) tunnel_io();
      });
      return;
    }
    ssize_t n = recv_upstream(scratch(), kReadChunk);
    if (n > 0) {
      arm(cfg_.read_timeout.count());
      ex_.send_body(std::string_view(scratch(), size_t(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    // The upstream closed (or failed): the tunnel ends.
    loop_.cancel(timer_);
    close_upstream();
    phase_ = Phase::done;
    ex_.abort();
    return;
  }
}

// ---- failures --------------------------------------------------------------------

bool ProxySession::may_retry(uint32_t condition) const {
  if (!(cfg_.next_upstream & condition)) return false;
  if (ex_.head_sent() || !body_replayable_) return false;
  // A request the upstream may have acted on is not sent twice.
  if (any_sent_ && !idempotent(ex_.req.method) && !(cfg_.next_upstream & config::kNextNonIdempotent)) return false;
  return true;
}

bool ProxySession::retry_after_send_allowed() const {
  return (cfg_.next_upstream & config::kNextError) && !ex_.head_sent() && body_replayable_ &&
         (idempotent(ex_.req.method) || (cfg_.next_upstream & config::kNextNonIdempotent));
}

bool ProxySession::has_next() const {
  if (cfg_.next_upstream_tries && tries_ >= cfg_.next_upstream_tries) return false;
  if (cfg_.next_upstream_timeout.count() && loop_.now_ms() - first_try_ms_ >= cfg_.next_upstream_timeout.count())
    return false;
  for (size_t i = 0; i < tried_.size(); ++i)
    if (!tried_[i] && group_->state.available(int(i), loop_.now_ms())) return true;
  return false;
}

void ProxySession::try_failed(Failure f, int err, const char* what, const char* phase) {
  loop_.cancel(timer_);
  const int status = f == Failure::timeout ? 504 : 502;
  if (f == Failure::timeout) err = ETIMEDOUT;
  log_upstream(config::LogLevel::error, err, what, phase);
  record_try(status);
  // A kept-alive connection that failed before any byte of an answer was
  // closed by the server while idle (or as the request arrived): that says
  // nothing about the server, and as nginx does with a cached connection,
  // the request goes again without that try counting, and that server may
  // be picked again, for another kept connection or a new one: each such
  // retry uses up one idle connection, so this ends.
  // So is a request the upstream said it did not process (a refused
  // HTTP/2 stream): it goes again, even a POST.
  const bool unprocessed = codec_->unprocessed();
  const bool stale = f == Failure::error && conn_requests_ > 0 && (!answered_ || unprocessed);
  const int peer = peer_;
  if (!stale) group_->state.failed(peer_, loop_.now_ms());
  close_upstream();
  last_status_ = status;
  uint32_t cond = f == Failure::error ? config::kNextError
                  : f == Failure::timeout ? config::kNextTimeout
                                          : config::kNextInvalidHeader;
  stale_cond_ = f == Failure::error     ? config::kStaleError
                : f == Failure::timeout ? config::kStaleTimeout
                                        : config::kStaleInvalidHeader;
  if (unprocessed) any_sent_ = false;
  if (may_retry(cond)) {
    any_sent_ = false;
    if (stale && peer >= 0) {
      --tries_;
      tried_[size_t(peer)] = 0;
    }
    next_try();
    return;
  }
  respond(status);
}

// The stored response answers at the end of the loop turn, as an error
// response would (this may run inside the upstream socket's callback).
bool ProxySession::answer_stale(uint32_t condition) {
  if (!fill_ || !fill_->may_serve_stale(condition, ::time(nullptr))) return false;
  loop_.cancel(timer_);
  close_upstream();
  phase_ = Phase::done;
  std::weak_ptr<char> alive = alive_;
  loop_.defer([this, alive] {
    if (alive.expired() || ex_.finished() || ex_.head_sent()) return;
    fill_->send_stale(ex_, cfg_);
  });
  return true;
}

void ProxySession::on_timeout() {
  switch (phase_) {
    case Phase::connecting:
      try_failed(Failure::timeout, 0, "upstream timed out", "connecting to upstream");
      return;
    case Phase::handshaking:
      try_failed(Failure::timeout, 0, "upstream timed out", "SSL handshaking to upstream");
      return;
    case Phase::exchanging:
      try_failed(Failure::timeout, 0, "upstream timed out",
                 request_sent_ ? "reading response header from upstream" : "sending request to upstream");
      return;
    case Phase::streaming:
      if (rate_delayed_) {  // the rate's pause is over, not a timeout
        rate_delayed_ = false;
        arm(cfg_.read_timeout.count());
        stream_body();
        return;
      }
      log_upstream(config::LogLevel::error, ETIMEDOUT, "upstream timed out", "reading upstream");
      fail_response(nullptr);
      return;
    case Phase::tunnel:
      // proxy_read_timeout is the tunnel's idle limit.
      log_upstream(config::LogLevel::info, ETIMEDOUT, "upstream timed out", "proxying upgraded connection");
      close_upstream();
      phase_ = Phase::done;
      ex_.abort();
      return;
    default:
      return;
  }
}

// The response comes from error handling (error_page applies), at the end
// of the loop turn: an error_page that proxies again replaces this session,
// which must not happen inside its own callback.
void ProxySession::respond(int status) {
  if (stale_cond_ && answer_stale(stale_cond_)) return;
  loop_.cancel(timer_);
  close_upstream();
  phase_ = Phase::done;
  std::weak_ptr<char> alive = alive_;
  http::Exchange* ex = &ex_;
  loop_.defer([ex, alive, status] {
    if (alive.expired() || ex->finished() || ex->head_sent()) return;
    http::send_error(*ex, status);
  });
}

// As nginx: the upstream's body is dropped with its connection, a few of
// its fields, its X-Accel-Limit-Rate and X-Accel-Charset stay for the target's response,
// which runs at the end of the loop turn (it may proxy again, replacing
// this session).
void ProxySession::accel_redirect(std::string_view target) {
  record_try(resp_.status);
  std::vector<std::pair<std::string, std::string>> fields;
  accel_redirect_fields(ex_, cfg_, resp_, fields);
  std::string charset;
  for (const auto& h : resp_.headers) {
    const std::string name(h.name);
    uint64_t rate = 0;
    if (strcasecmp(name.c_str(), "x-accel-limit-rate") == 0 && !(cfg_.ignore_headers & config::kIgnoreXAccelLimitRate) &&
        config::parse_number(h.value, rate))
      ex_.access.limit_rate = int64_t(rate);
    if (strcasecmp(name.c_str(), "x-accel-charset") == 0 && !(cfg_.ignore_headers & config::kIgnoreXAccelCharset))
      charset.assign(h.value);
  }
  std::string where(target);
  loop_.cancel(timer_);
  close_upstream();
  phase_ = Phase::done;
  std::weak_ptr<char> alive = alive_;
  http::Exchange* ex = &ex_;
  loop_.defer([ex, alive, where = std::move(where), fields = std::move(fields), charset = std::move(charset)]() mutable {
    if (alive.expired() || ex->finished() || ex->head_sent()) return;
    ex->redirect_headers = std::move(fields);
    ex->redirect_charset = std::move(charset);
    http::accel_redirect(*ex, where);
  });
}

// The client closed first (or its connection failed): the upstream
// connection is closed at once, as nginx does, and the try is logged with
// the status the upstream gave, or "-" when it had not answered yet.
void ProxySession::on_client_gone() {
  if (phase_ == Phase::done) return;
  loop_.cancel(timer_);
  if (peer_ >= 0 && phase_ != Phase::tunnel) {  // a tunnel's try was noted when it began
    const char* doing = phase_ == Phase::connecting    ? "connecting to upstream"
                        : phase_ == Phase::handshaking ? "SSL handshaking to upstream"
                        : phase_ == Phase::exchanging ? (request_sent_ ? "reading response header from upstream"
                                                                       : "sending request to upstream")
                                                      : "reading upstream";
    if (log::enabled(config::LogLevel::info)) {
      log::write(config::LogLevel::info,
                 "client prematurely closed connection, so upstream connection is closed too while %s%s", doing,
                 http::log_context(ex_, upstream_url()).c_str());
    }
    record_try(phase_ == Phase::streaming ? resp_.status : 0);
  }
  close_upstream();
  phase_ = Phase::done;
}

void ProxySession::close_upstream() {
  if (tls_) {
    // A response read to its end, or one abandoned: the close is announced
    // unless the TLS layer already failed.
    tls_->close_notify();
    tls_.reset();
  }
  if (fd_ >= 0) {
    ::close(fd_);  // also leaves the epoll set
    fd_ = -1;
  }
  if (peer_ >= 0) {
    group_->state.release(peer_);
    peer_ = -1;
  }
  upstream::SocketHandler::retire(loop_, handler_);
}

namespace {
void append_listed(std::string& list, std::string_view item) {
  if (!list.empty()) list += ", ";
  list += item;
}
}  // namespace

// The try's address and status as its head goes to the client: the header
// filters (add_header X-Upstream $upstream_addr) read them then, as nginx's.
void ProxySession::note_try_head(int status) {
  if (peer_ < 0 || try_noted_) return;
  append_listed(ex_.upstream_addr, group_->cfg->servers[size_t(peer_)].name);
  append_listed(ex_.upstream_status, std::to_string(status));
  try_noted_ = true;
}

void ProxySession::record_try(int status) {
  if (peer_ < 0) return;
  if (!try_noted_) {
    append_listed(ex_.upstream_addr, group_->cfg->servers[size_t(peer_)].name);
    append_listed(ex_.upstream_status, status > 0 ? std::to_string(status) : "-");  // "-": no response came
  }
  try_noted_ = false;
  auto sep = [](std::string& s) {
    if (!s.empty()) s += ", ";
  };
  upstream::append_try_time(ex_.upstream_response_time, std::max<int64_t>(loop_.now_ms() - try_start_ms_, 0));
  upstream::append_try_time(ex_.upstream_connect_time, connect_ms_);
  upstream::append_try_time(ex_.upstream_header_time, header_ms_);
  sep(ex_.upstream_response_length);
  ex_.upstream_response_length += std::to_string(response_length_);
  if (ex_.config && ex_.config->keep_upstream_bytes) {
    append_listed(ex_.upstream_bytes_sent, std::to_string(try_bytes_sent_));
    append_listed(ex_.upstream_bytes_received, std::to_string(try_bytes_received_));
  }
}

// nginx's form: the scheme, the server tried (a unix socket's path ends
// with ':' before the URI) and the URI sent.
std::string ProxySession::upstream_url() const {
  std::string url = cfg_.ssl && std::string_view(codec_->scheme()) == "http" ? "https" : codec_->scheme();
  url += "://";
  if (peer_ >= 0) {
    const auto& server = group_->cfg->servers[size_t(peer_)];
    url += server.name;
    if (server.addr.ss_family == AF_UNIX) url += ':';
  } else {
    url += group_->cfg->name;
  }
  url += codec_->log_uri();
  return url;
}

// nginx's form: "FastCGI sent in stderr: "..." while ...", one line per
// record, at error level.
void ProxySession::log_stderr(const char* phase) {
  std::string text;
  config::LogLevel level = config::LogLevel::error;
  while (codec_->take_log_line(level, text)) {
    log_upstream(level, 0, text.c_str(), phase);
    text.clear();
  }
  while (codec_->take_stderr(text)) {
    if (log::enabled(config::LogLevel::error)) {
      log::write(config::LogLevel::error, "%s sent in stderr: \"%s\" while %s%s", codec_->name(), text.c_str(), phase,
                 http::log_context(ex_, upstream_url()).c_str());
    }
    text.clear();
  }
}

void ProxySession::log_upstream(config::LogLevel level, int err, const char* what, const char* phase) {
  if (!log::enabled(level)) return;
  std::string error = err ? " (" + std::to_string(err) + ": " + strerror(err) + ")" : "";
  log::write(level, "%s%s while %s%s", what, error.c_str(), phase, http::log_context(ex_, upstream_url()).c_str());
}

}  // namespace

namespace {

void run_session(http::Exchange& ex, const ProxyConfig& cfg, std::shared_ptr<upstream::Group> group,
                 std::unique_ptr<UpstreamCodec> codec, std::shared_ptr<const ProxyConfig> owned,
                 std::unique_ptr<cache::Fill> fill) {
  auto session =
      std::make_unique<ProxySession>(ex, cfg, std::move(group), std::move(codec), std::move(owned), std::move(fill));
  auto* raw = session.get();
  ex.handler_state = std::move(session);
  raw->start();
}

void start_session(http::Exchange& ex, const ProxyConfig& cfg, std::shared_ptr<upstream::Group> group,
                   std::unique_ptr<UpstreamCodec> codec, std::shared_ptr<const ProxyConfig> owned) {
  // With no cache here, the ngx_cache_purge module's purge method still
  // asks the cache (to be answered 404).
  if (!cfg.cache || (!cfg.cache->enabled() && !cfg.cache->purge_by_method)) {
    run_session(ex, cfg, std::move(group), std::move(codec), std::move(owned), nullptr);
    return;
  }
  // The cache answers, or starts the session (perhaps after waiting for
  // another request's fill): what the session needs waits in `pending`.
  struct Pending {
    std::shared_ptr<upstream::Group> group;
    std::unique_ptr<UpstreamCodec> codec;
    std::shared_ptr<const ProxyConfig> owned;
  };
  auto pending = std::make_shared<Pending>(Pending{std::move(group), std::move(codec), std::move(owned)});
  cache::serve(ex, cfg, [&cfg, pending](http::Exchange& ex, std::unique_ptr<cache::Fill> fill) {
    if (!pending->codec) return;  // started once already
    run_session(ex, cfg, std::move(pending->group), std::move(pending->codec), std::move(pending->owned),
                std::move(fill));
  });
}

}  // namespace

void serve_upstream(http::Exchange& ex, const config::ProxyConfig& cfg, std::unique_ptr<UpstreamCodec> codec) {
  start_session(ex, cfg, ex.services().upstreams->group(cfg.upstream), std::move(codec), nullptr);
}

void start_proxy(http::Exchange& ex, const ProxyConfig& cfg, std::shared_ptr<upstream::Group> group,
                 std::shared_ptr<const ProxyConfig> owned) {
  start_session(ex, cfg, std::move(group), std::make_unique<HttpUpstreamCodec>(ex, cfg), std::move(owned));
}

void start_upstream(http::Exchange& ex, const ProxyConfig& cfg, std::shared_ptr<upstream::Group> group,
                    std::unique_ptr<UpstreamCodec> codec, std::shared_ptr<const ProxyConfig> owned) {
  start_session(ex, cfg, std::move(group), std::move(codec), std::move(owned));
}

void serve_proxy(http::Exchange& ex) {
  const auto& cfg = *ex.settings().proxy;
  if (!cfg.url_template.empty()) {
    serve_proxy_with_variables(ex, cfg);  // proxy_target.cc: may resolve a name first
    return;
  }
  serve_upstream(ex, cfg, std::make_unique<HttpUpstreamCodec>(ex, cfg));
}

}  // namespace torii::handlers
