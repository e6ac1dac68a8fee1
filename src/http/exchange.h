// One request and its response, as every handler sees it: the decoded head,
// the config it runs under, the connection it came on, and the response
// methods. The codec session owns the Exchange and the ResponseSink below
// it; handlers call send_head/send_body/send_file/finish here, which run the
// header filters (add_header, expires, Server, Date) and count bytes for the
// access log.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <list>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "http/access_state.h"
#include "http/request.h"
#include "http/response.h"

namespace torii::userid {
struct UidState;
}
namespace torii::handlers {
class OpenFileCache;
class RequestBodyBuffer;
}
namespace torii::core {
class EventLoop;
}
namespace torii::upstream {
class Upstreams;
}
namespace torii::dns {
class Resolvers;
}  // namespace torii::dns
namespace torii::cache {
class BackgroundUpdates;
}
namespace torii::mirror {
class Mirrors;
}
namespace torii::ssi {
struct MainState;
}
namespace torii::net {
class TlsDetails;
struct ProxyProtocolAddrs;
struct ClientCertInfo;
}

namespace torii::http {

// Facts about the downstream connection, fixed when it was accepted.
struct ConnectionInfo {
  uint64_t id = 0;  // $connection
  uint64_t requests = 0;  // requests so far on it, this one included
  int64_t start_ms = 0;   // accepted at, on the worker loop's clock (keepalive_time)
  sockaddr_storage peer{};
  std::string remote_addr;  // text form, no port
  uint16_t remote_port = 0;
  int fd = -1;  // the client's TCP socket ($tcpinfo_*); -1 over QUIC
  // The local address as text and port only: an idle connection keeps no
  // second sockaddr_storage (128 bytes) for them.
  std::string server_addr;
  uint16_t server_port = 0;
  bool tls = false;
  // TLS facts, set when the handshake completes ($ssl_* variables).
  bool ssl_session_reused = false;
  bool ssl_early_data = false;  // the first request came in TLS early data: 425 unless idempotent
  std::string ssl_server_name;  // SNI, lower-case
  // The session's other facts ($ssl_protocol, $ssl_cipher...), asked of the
  // TLS library when a variable reads them, so an idle connection stores
  // none; lives as long as the connection's TLS state.
  const net::TlsDetails* tls_details = nullptr;
  // The PROXY protocol header's addresses (`listen ... proxy_protocol`);
  // null without one, or for UNKNOWN and LOCAL headers.
  std::shared_ptr<const net::ProxyProtocolAddrs> proxy_protocol;
  // The client's certificate and its verdict, when the server asks for one.
  std::shared_ptr<const net::ClientCertInfo> client_cert;
};

// Per-worker services a handler may use; never shared across threads.
struct WorkerServices {
  handlers::OpenFileCache* open_files = nullptr;
  core::EventLoop* loop = nullptr;             // for handlers with their own sockets and timers
  upstream::Upstreams* upstreams = nullptr;   // upstream groups' state and keep-alive pools
  dns::Resolvers* resolvers = nullptr;        // name resolution at request time (`resolver`)
  cache::BackgroundUpdates* cache_updates = nullptr;  // proxy_cache_background_update's requests
  mirror::Mirrors* mirrors = nullptr;                 // the `mirror` directive's requests
};

class Exchange {
 public:
  Exchange(ResponseSink& sink, const ConnectionInfo& conn, WorkerServices& services)
      : sink_(sink), conn_(conn), client_(&conn), services_(services) {}
  ~Exchange();
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  // The request is being answered (stub_status's requests and Writing):
  // counted once, from the pipeline's first step until the exchange ends.
  void count_request();

  RequestHead req;
  std::shared_ptr<const config::Config> config;
  const config::Server* server = nullptr;
  const config::Location* location = nullptr;  // nullptr: server.settings apply
  // nginx's add_uri_to_alias: try_files found a file under this regex
  // location's alias, so the URI (the entry) now maps to alias + URI there.
  const config::Location* uri_added_to_alias = nullptr;
  config::Captures captures;

  const config::LocationSettings& settings() const {
    return location ? location->settings : server->settings;
  }
  // The client: the connection's peer, or the address the realip module
  // took from a trusted proxy's header, for everything after it (logs,
  // allow/deny, limits, X-Forwarded-For). `socket_conn()` stays the peer.
  const ConnectionInfo& conn() const { return *client_; }
  const ConnectionInfo& socket_conn() const { return conn_; }
  void set_real_client(std::unique_ptr<ConnectionInfo> client);
  bool realip_done = false;  // the realip module ran (it runs once per request)
  WorkerServices& services() { return services_; }
  const WorkerServices& services() const { return services_; }

  // The request came in TLS early data (0-RTT), so an attacker may replay
  // it: over TCP the first request of a connection that sent early data,
  // over QUIC a stream whose head arrived in 0-RTT packets.
  bool early_data = false;
  bool in_early_data() const { return early_data || (conn_.ssl_early_data && conn_.requests == 1); }

  // client_body_timeout: when a client that owes body bytes and has been
  // silent since `activity_ms` times out (INT64_MAX: no limit). The log
  // line nginx writes when it does.
  int64_t body_timeout_at(int64_t activity_ms) const {
    const int64_t timeout = settings().client_body_timeout.count();
    return timeout > 0 ? activity_ms + timeout : INT64_MAX;
  }
  void log_body_timeout() const;

  // Response. send_head runs the header filters, then hands the head on.
  void send_head(ResponseHead head);
  // The header filters after the image filter's place, and the head to the
  // codec: send_head's second half, which a filter that held the head
  // (image_filter) runs once it has the head to send.
  void pass_head_on(ResponseHead head);
  // Such a filter that ends up answering with an error page instead.
  void take_back_head() { head_sent_ = false; }
  bool image_filter_passed = false;  // the image filter judged a head already
  // An upstream's 103 Early Hints, passed on when the location's
  // early_hints conditions allow it (modules/early_hints), before the head.
  void send_early_hints(const ResponseHead& hints);
  void send_body(std::string_view data);
  void send_file(std::shared_ptr<const OpenFile> file, int64_t offset, int64_t length);
  void finish();
  // Trailer fields after the body (see ResponseSink::set_trailers); they
  // go to the codec at finish(), with add_trailer's, and it sends them at
  // the body's end.
  void set_trailers(std::vector<std::pair<std::string, std::string>> trailers) { trailers_ = std::move(trailers); }
  // Ends a response that cannot be completed (see ResponseSink::abort).
  void abort();

  // The body filter send_head put between the handler and the codec
  // (compression), when the response is encoded: body calls go through it
  // and it ends the response with finish_filtered().
  std::shared_ptr<ResponseSink> body_filter;
  void finish_filtered();
  // The pacing sink (limit_rate) handed on the response's last byte.
  void finish_paced();
  int64_t compressed_in = 0;   // body bytes the filter took ($gzip_ratio)
  int64_t compressed_out = 0;  // and the encoded bytes it gave the codec
  // limit_rate's pacing sink (modules/limit_rate), under the body filter:
  // what both hand on reaches the codec through it. Null: no rate.
  std::shared_ptr<ResponseSink> rate_filter;
  // The sink under the body filter: the pacing sink or the codec's.
  ResponseSink& below() const { return rate_filter ? *rate_filter : sink_; }

  bool head_sent() const { return head_sent_; }
  bool finished() const { return finished_; }

  // Request body and flow control, for handlers that stream (the proxy).
  bool has_body() const { return req.chunked || req.content_length > 0; }
  void read_body(BodyReader* reader) { body_source ? body_source->read_body(reader) : sink_.read_body(reader); }
  void resume_body() { body_source ? body_source->resume_body() : sink_.resume_body(); }
  // A body read whole before the content phase (mirror_request_body):
  // handlers then read it from here, not from the codec.
  struct BodySource {
    virtual ~BodySource() = default;
    virtual void read_body(BodyReader* reader) = 0;
    virtual void resume_body() = 0;
  };
  std::unique_ptr<BodySource> body_source;
  // The body a handler read whole (request buffering, mirror_request_body,
  // client_body_early_read), for $request_body and $request_body_file;
  // null until one has.
  std::shared_ptr<const handlers::RequestBodyBuffer> request_body;
  size_t queued_bytes() const { return body_filter ? body_filter->queued_bytes() : below().queued_bytes(); }
  void set_drain_callback(std::function<void()> cb) {
    (body_filter ? *body_filter : below()).set_drain_callback(std::move(cb));
  }

  // What an asynchronous handler keeps for this exchange (upstream
  // connection, buffers). Destroyed with the exchange, at the end of a loop
  // turn, never inside its own callbacks: the client going away ends it.
  struct HandlerState {
    virtual ~HandlerState() = default;
    // The client went away before the response was complete: let go of
    // what serves it (the upstream connection) and note the try for the log.
    virtual void on_client_gone() {}
  };
  std::unique_ptr<HandlerState> handler_state;
  // The userid module's cookies for this request, made when first asked for.
  std::shared_ptr<userid::UidState> uid;

  // The codec calls this when the client closed (or failed) before the
  // response was complete, just before the request is logged: nginx's 499
  // when nothing of a response was sent.
  void client_gone();
  // The handler goes on when the client closes its side while it waits
  // (proxy_ignore_client_abort on): the codec then stops reading instead of
  // ending the exchange, and the response is still written if it can be.
  bool ignore_client_abort = false;

  // For the access log and $variables.
  // When the request's first byte came ($request_time runs from here to the
  // log line, which is written once the last byte left or the client left).
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  int64_t start_unix_ms = 0;  // wall clock at start, for $msec / $time_local
  int status = 0;
  int64_t body_bytes_sent = 0;   // body bytes that left for the client, counted by the codec
  int64_t header_bytes = 0;      // serialised head size, set by the codec
  int64_t request_length = 0;    // request line + headers + body, set by the codec
  ResponseHead response;         // the head as sent (after filters), for $sent_http_NAME
  // Fields of an upstream answer that X-Accel-Redirect replaced, which
  // nginx keeps for the target's response (Content-Type, Set-Cookie,
  // Content-Disposition, Cache-Control, Expires, Accept-Ranges).
  std::vector<std::pair<std::string, std::string>> redirect_headers;
  // Its X-Accel-Charset, which nginx also applies to the target's response.
  std::string redirect_charset;
  // Request field values more_set_input_headers wrote: req.headers views
  // point here (a list neither moves what it holds nor allocates when empty).
  std::list<std::string> kept_field_values;
  const ResponseHead* head_in_filters = nullptr;  // the head while send_head filters it
  int internal_redirects = 0;    // guards error_page/index/try_files loops
  std::string request_filename;  // the file the static handler mapped to
  std::string realpath_root;
  // Set by the proxy for $upstream_addr/_status/_response_time/
  // _connect_time/_header_time; tries are joined with ", " as nginx does.
  std::string upstream_addr;
  std::string upstream_status;
  std::string upstream_response_time;
  std::string proxy_host;  // $proxy_host of a proxy_pass with variables, set when it starts
  // The upstream's response fields, kept only when the config reads
  // $upstream_http_* or $upstream_cookie_* (Config::keep_upstream_headers).
  std::vector<std::pair<std::string, std::string>> upstream_headers;
  mutable std::string request_id;  // $request_id, made on first use
  // A body of no announced length (chunked, HTTP/2 without content-length)
  // read whole before going upstream: its size, for $content_length, as
  // nginx counts it (FastCGI's CONTENT_LENGTH). -1 until then.
  int64_t body_length_read = -1;
  std::string upstream_connect_time;
  std::string upstream_header_time;
  // $upstream_cache_status: MISS, HIT, EXPIRED... (static strings), empty
  // when no cache took part.
  std::string_view upstream_cache_status;
  std::string upstream_response_length;  // body bytes per try, as the upstream sent them
  std::string upstream_bytes_sent;       // bytes per try written to the upstream connection
  std::string upstream_bytes_received;   // and read from it, head included
  bool is_internal = false;      // reached by internal redirect (error_page...)
  bool background = false;       // no client waits: a cache's background update
  // The slice module: $slice_range, and whether this exchange fetches one
  // part of another's response (its head then goes on unfiltered: the
  // main request filters the response it assembles).
  std::string slice_range;
  bool slice_part = false;
  // A subrequest (an SSI include, an addition): how deep under the
  // client's request (0: the client's own). Its body goes into its
  // parent's, so it is neither compressed nor paced on its own.
  int subrequest_depth = 0;
  // What the SSI filters of a request and of its subrequests share
  // (variables, blocks): made by the first one, handed to the includes.
  std::shared_ptr<ssi::MainState> ssi_state;
  // A rewrite changed the URI inside this location and stayed (`break`):
  // proxy_pass then sends the whole URI, not its own URI part (nginx's
  // !valid_location). Cleared when the location's rewrite phase starts.
  bool location_uri_rewritten = false;
  bool header_only = false;      // HEAD, or a status without body: send_body is dropped
  bool pipelined = false;        // $pipe: read with the previous request's bytes
  // The request reached its content handler (or the pre-content phases are
  // over): from here on a body no reader takes is read and dropped. Before
  // it (an auth_request or a limit_req delay pending) the body waits.
  bool content_started = false;
  bool in_error_page = false;    // error_page redirected (the response is an error page)
  // The location that redirected had recursive_error_pages on: an error of
  // the target may be redirected again.
  bool error_pages_recursive = false;
  std::string redirect_args;     // storage for req.query after an internal redirect
  int status_override = 0;       // error_page: the status the response goes out with
  // Values of `set` variables and named captures, by slot (Config::variables);
  // sized on the first assignment, so requests that set none pay nothing.
  struct UserVariable {
    std::string value;
    bool set = false;
  };
  std::vector<UserVariable> variables;
  bool close_connection = false; // no keep-alive after this response (or 444: no response)
  // limit_req, limit_conn, limit_rate, auth: their decisions and holds.
  AccessState access;

 private:
  ResponseSink& sink_;
  const ConnectionInfo& conn_;    // the socket's peer
  const ConnectionInfo* client_;  // conn_, or realip's copy below
  std::unique_ptr<ConnectionInfo> real_client_;
  WorkerServices& services_;
  std::vector<std::pair<std::string, std::string>> trailers_;
  bool expect_trailers_ = false;  // add_trailer applies to this response
  bool own_server_ = true;        // the Server and Date fields are still the server's to add
  bool own_date_ = true;          // (headers-more may take them)
  bool head_sent_ = false;
  bool finished_ = false;
  bool counted_ = false;
};

}  // namespace torii::http
