// The server side of one QUIC connection carrying HTTP/3, as a state
// machine: datagrams in (receive), packets out (produce), timer deadlines
// as values (expiry). ngtcp2 does QUIC (loss recovery, congestion and flow
// control, anti-amplification, connection IDs), GnuTLS the handshake
// through ngtcp2's crypto glue, nghttp3 HTTP/3 framing and QPACK. This
// maps their callbacks onto streams (one Exchange each). No socket and no
// timer: the I/O shell (http3::Connection) owns those, so tests and the
// fuzzer can drive a session in memory.
#pragma once

#include <gnutls/gnutls.h>
#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "http/exchange.h"
#include "http2/flood_guard.h"
#include "net/quic_tls_details.h"

namespace torii::core {
struct ListenBinding;
}

namespace torii::http3 {

class Stream;
class HqSession;

// Our connection IDs: the first byte names the worker that owns the
// connection (so a datagram that reached another worker can be told apart
// from garbage), the rest is random.
constexpr size_t kCidLength = 16;

// What a session needs from its surroundings.
class SessionHost {
 public:
  virtual ~SessionHost() = default;
  virtual void run_request(http::Exchange& ex) = 0;
  virtual void log_request(http::Exchange& ex) = 0;
  virtual void wake() = 0;  // output is waiting: produce soon
  virtual int64_t now_ms() = 0;
  virtual http::WorkerServices& services() = 0;
  // A connection ID of ours started or stopped naming this connection.
  virtual void cid_added(const ngtcp2_cid& cid) = 0;
  virtual void cid_removed(const ngtcp2_cid& cid) = 0;
  // The TLS handshake completed (the endpoint counts those in progress).
  virtual void handshake_completed() = 0;
};

// The first Initial packet's facts, from ngtcp2_accept and token checks.
struct SessionStart {
  ngtcp2_cid client_dcid{};   // the DCID the client chose (or our Retry's SCID)
  ngtcp2_cid client_scid{};
  ngtcp2_cid original_dcid{};  // before a Retry; same as client_dcid without one
  bool retried = false;
  uint32_t version = 0;
  ngtcp2_path path{};
  uint8_t worker_byte = 0;
  const std::string* static_secret = nullptr;  // Retry tokens and stateless-reset tokens
  uint64_t handshake_timeout_ms = 60'000;
};

class Session {
 public:
  Session(SessionHost& host, const http::ConnectionInfo& info, std::shared_ptr<core::ListenBinding> binding);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Creates the QUIC and TLS state for the client's first Initial.
  bool start(const SessionStart& s, int64_t now_ns);

  enum class Status : uint8_t {
    ok,
    draining,  // the client closed: say nothing more, wait 3 PTO, then forget
    closing,   // we closed with an error: send close_packet(), then forget
    drop,      // forget at once (idle timeout, retry-worthy or unusable packet)
  };
  Status receive(const ngtcp2_path& path, const ngtcp2_pkt_info& pi, const uint8_t* data, size_t len, int64_t now_ns);
  Status handle_expiry(int64_t now_ns);
  int64_t expiry_ns() const;
  int64_t pto_ns() const;
  // The soonest a timeout of the connection's requests is due, on the
  // loop's clock (INT64_MAX: none): client_header_timeout for a request
  // stream whose head is not in, client_body_timeout for a client that
  // owes a handler body bytes, send_timeout for a response the client
  // takes nothing of, keepalive_timeout once no request is open.
  int64_t next_deadline() const;
  // Handles those due: the stream's reset or 408, logged. True: the
  // connection has been without requests for keepalive_timeout and ends.
  bool expire_deadlines(int64_t now_ms);

  // Writes up to `max_packets` packets for one path into `buf`. Every
  // packet but the last is `segment` bytes (what UDP GSO needs). Returns
  // the bytes written (0: nothing to send) and sets `path` to their path.
  // `status` becomes closing on a fatal error.
  size_t produce(uint8_t* buf, size_t cap, size_t max_packets, ngtcp2_path_storage& path, size_t& segment,
                 int64_t now_ns, Status& status);
  // A packet produce() wrote after the batch that could not join it
  // (another path, or larger than the batch's segments): send it alone.
  bool take_carry(size_t& offset, size_t& len, ngtcp2_path_storage& path);
  size_t max_packet_size() const;
  size_t send_quantum() const;
  // The CONNECTION_CLOSE datagram for closing: built once, sent again to
  // anything the client still sends (RFC 9000 10.2.1).
  const std::string& close_packet() const { return close_packet_; }
  const ngtcp2_path* path() const;

  // Work outside the libraries' callbacks: requests to run, bodies to
  // deliver, drain callbacks due. True if anything ran.
  bool service();
  // GOAWAY: no new requests; those in flight finish (graceful stop, reload
  // retiring the address, keepalive_requests).
  void shutdown();
  // The second step of the graceful stop: GOAWAY with the last request
  // taken; those in flight finish.
  void finish_shutdown();
  // Nothing left to answer after a graceful stop: CONNECTION_CLOSE with
  // H3_NO_ERROR (close_packet()).
  void close_gracefully(int64_t now_ns);
  bool going_away() const { return going_away_; }
  size_t open_streams() const;
  bool handshake_done() const { return handshake_done_; }
  bool speaks_hq() const { return hq_ != nullptr; }  // the client chose hq-interop
  void abort_streams();
  void collect_closed();
  int64_t idle_timeout_ms() const { return idle_ms_; }

  // ---- for streams -----------------------------------------------------------
  nghttp3_conn* h3() { return h3_; }
  ngtcp2_conn* quic() { return conn_; }
  SessionHost& host() { return host_; }
  http::ConnectionInfo& info() { return info_; }
  const std::shared_ptr<core::ListenBinding>& binding() const { return binding_; }
  size_t stream_buffer_size() const { return stream_buffer_; }
  // The longest request line an hq-interop stream may send (large_client_header_buffers).
  size_t request_line_limit() const { return field_limit_; }
  // A request starts: keepalive_requests counts it.
  void count_request();
  void stream_output_changed(Stream& s);
  void stream_wants_delivery(Stream& s);
  void stream_drain_due(Stream& s);
  // Gives `n` request-body bytes of stream `id` back to the client's window.
  void consume(int64_t id, size_t n);
  // Ends stream `id` in both directions with `app_error`.
  void reset_stream(int64_t id, uint64_t app_error);
  // Asks the client to stop sending on stream `id` (STOP_SENDING with
  // H3_NO_ERROR: the response does not need the rest, RFC 9114 4.1.1).
  void stop_reading(int64_t id);

 private:
  class Callbacks;
  friend class Callbacks;

  Stream* find(int64_t id);
  bool setup_http3();
  // With the hq-interop ALPN the application is HTTP/0.9 (hq_), else HTTP/3 (h3_).
  bool setup_application();
  // produce()'s stream data source and its bookkeeping, h3_ or hq_.
  ssize_t next_stream_data(int64_t& id, int& fin, nghttp3_vec* vec, size_t veccnt);
  bool stream_written(int64_t id, size_t n, bool fin);
  void stream_blocked(int64_t id);
  void stream_shut(int64_t id);
  Status fail(int liberr);
  Status fail_app(uint64_t app_error);
  void build_close_packet(int64_t now_ns);
  void run_ready();
  void submit_pending();
  void on_stream_closed(int64_t id);
  // Request stream `id` is gone (closed, with or without a Stream).
  void stream_gone(int64_t id);
  // keepalive_timeout runs: HTTP/3 with no request open.
  bool quiet() const { return h3_ && handshake_done_ && !going_away_ && streams_.empty() && awaiting_head_.empty(); }
  // A client cancelled request stream `id`; false once cancels come faster
  // than the budget allows (rapid reset): the connection closes with
  // H3_EXCESSIVE_LOAD.
  bool count_cancel(int64_t id);
  int uni_stream_reset(int64_t id, uint64_t app_error);  // 0, or NGTCP2_ERR_CALLBACK_FAILURE (last_error_ set)
  bool count_cancel_budget();

  SessionHost& host_;
  http::ConnectionInfo info_;
  std::shared_ptr<core::ListenBinding> binding_;
  std::shared_ptr<const config::Config> config_;  // holds the TLS credentials this connection started with

  ngtcp2_conn* conn_ = nullptr;
  nghttp3_conn* h3_ = nullptr;
  std::unique_ptr<HqSession> hq_;  // instead of h3_ when the client chose hq-interop
  gnutls_session_t tls_ = nullptr;
  net::GnutlsDetails tls_details_;  // info_.tls_details once the handshake is done
  ngtcp2_crypto_conn_ref conn_ref_{};
  ngtcp2_connection_close_error last_error_{};
  std::string close_packet_;
  const std::string* static_secret_ = nullptr;
  uint8_t worker_byte_ = 0;

  // Settings of the address's default server, fixed at start.
  uint32_t max_streams_ = 128;
  size_t stream_buffer_ = 64 * 1024;
  size_t field_limit_ = 8192;
  size_t list_limit_ = 32768;
  int64_t idle_ms_ = 75'000;
  uint64_t max_requests_ = 1000;
  uint64_t requests_ = 0;
  int64_t header_timeout_ms_ = 60'000;    // client_header_timeout
  int64_t keepalive_time_ms_ = 3'600'000;  // keepalive_time
  // keepalive_timeout counts from here: the handshake, or the last request's end.
  int64_t quiet_since_ms_ = 0;
  // Request streams the client opened whose head has not arrived: when each opened.
  std::unordered_map<int64_t, int64_t> awaiting_head_;

  // By id: the queues below hold ids, and a connection may carry thousands
  // of open streams, so each lookup must not scan them all.
  std::unordered_map<int64_t, std::unique_ptr<Stream>> streams_;
  std::vector<std::unique_ptr<Stream>> graveyard_;
  std::vector<int64_t> ready_, submit_, deliver_, drained_;
  std::vector<int64_t> batch_;
  size_t carry_offset_ = 0;
  size_t carry_len_ = 0;
  ngtcp2_path_storage carry_path_{};
  bool handshake_done_ = false;
  bool tickets_ = false;  // session tickets are issued (ssl_session_tickets)
  bool reading_early_ = false;  // nghttp3 is reading bytes of a 0-RTT packet
  bool going_away_ = false;
  bool in_callback_ = false;
  // Streams cancelled per second (rapid reset), HTTP/2's budget.
  http2::FloodGuard flood_;
};

}  // namespace torii::http3
