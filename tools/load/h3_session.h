// The client side of one QUIC connection carrying HTTP/3, as a state
// machine with no socket and no timer: datagrams in (receive), packets out
// (produce), its deadline as a value (expiry, handle_expiry). ngtcp2 does
// QUIC (loss recovery, congestion and flow control, pacing times), GnuTLS
// the handshake through ngtcp2's crypto glue, nghttp3 HTTP/3 framing and
// QPACK. Up to `streams` requests are in flight, each in a preallocated
// slot, fewer while the server's stream credit is lower; a response is
// complete (and its latency taken) when the last byte of its body arrives,
// not when QUIC retires the stream. Bodies are counted and dropped (or
// kept for --save), their flow-control credit given back at once. Outcomes
// go to a RequestSink.
//
// With `hq` (--hq) the same connection speaks hq-interop instead: no
// nghttp3, each request stream carries "GET /path\r\n" and its FIN, and
// the response is the stream's bytes up to the server's FIN (no status).
#pragma once

#include <gnutls/gnutls.h>
#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <sys/socket.h>

#include <cstdint>
#include <vector>

#include "load/codec.h"
#include "load/request_template.h"

namespace torii::load {

class H3Session {
 public:
  // The largest datagram the server may send (max_udp_payload_size).
  static constexpr size_t kMaxDatagram = 4096;

  // `one_request`: the connection ends after its first response
  // (--connect-per-request).
  // `save_dir`: where --save writes response bodies, or empty.
  H3Session(const RequestTemplates& templates, unsigned streams, bool one_request, bool hq,
            const std::string& save_dir, RequestSink& sink);
  ~H3Session();
  H3Session(const H3Session&) = delete;
  H3Session& operator=(const H3Session&) = delete;

  // A new connection from `local` to `remote`; the previous one's state is
  // gone. `server_name`: SNI, or null. False: it could not start (error()).
  bool start(const sockaddr* local, socklen_t local_len, const sockaddr* remote, socklen_t remote_len,
             const char* server_name, gnutls_certificate_credentials_t credentials, int64_t now_ns);
  // The QUIC handshake is done and HTTP/3 is ready for requests.
  bool ready() const { return handshake_done_ && (h3_ != nullptr || (hq_ && hq_ready_)); }
  unsigned capacity() const;
  void submit(int64_t from_ns, int64_t sent_ns);

  // One datagram read. False: the connection is over (error_kind() and
  // error() say why; clean() when the server closed it without an error).
  bool receive(const uint8_t* data, size_t len, int64_t now_ns);
  // Writes one packet into `buf` (at least max_packet_size() bytes).
  // Returns its length, 0 when nothing is to be sent now, -1 when the
  // connection is over.
  ssize_t produce(uint8_t* buf, size_t cap, int64_t now_ns);
  // After a burst of packets: when ngtcp2 may send the next (pacing, once
  // the handshake has measured the round trip).
  void burst_sent(int64_t now_ns);
  size_t max_packet_size() const;
  size_t send_quantum() const;
  // When handle_expiry is due (INT64_MAX: never).
  int64_t expiry() const;
  // False: the connection is over (idle or handshake timeout, loss
  // recovery gave up).
  bool handle_expiry(int64_t now_ns);
  // A CONNECTION_CLOSE packet (H3_NO_ERROR) for a clean close; 0 if none.
  size_t write_close(uint8_t* buf, size_t cap, int64_t now_ns);

  // The connection ended: every outstanding request is reported failed.
  void closed(ErrorKind kind, const char* why);
  // The run is over: forget the connection and what is in flight, unreported.
  void discard();
  // Nothing more will happen here: GOAWAY (or --connect-per-request) and
  // nothing in flight.
  bool finished() const;
  size_t outstanding() const { return active_; }
  int64_t oldest_sent() const;
  // Bytes of stream data (HTTP/3 frames) received and sent since start.
  uint64_t stream_bytes_received() const { return bytes_received_; }
  uint64_t stream_bytes_sent() const { return bytes_sent_; }

  ErrorKind error_kind() const { return error_kind_; }
  const char* error() const { return error_; }
  // The server closed the connection with no error (NO_ERROR / H3_NO_ERROR).
  bool clean() const { return clean_; }

 private:
  struct Slot {
    int64_t from_ns = 0;
    int64_t sent_ns = 0;
    int64_t stream_id = -1;
    int status = 0;
    bool used = false;
    // hq: the request line's bytes QUIC took, and whether flow control holds the rest.
    uint32_t url = 0;
    size_t sent = 0;
    bool blocked = false;
    std::string body;  // --save
  };
  class Callbacks;
  friend class Callbacks;

  bool setup_http3();
  // hq: the next request line bytes to send (a slot's stream id, or -1).
  size_t hq_pending(int64_t& stream_id, int& fin, ngtcp2_vec* vec);
  void hq_written(int64_t stream_id, size_t n);
  void hq_blocked(int64_t stream_id);
  Slot* slot_of(int64_t stream_id);
  void save_body(Slot& slot);
  void end();
  void release(Slot& slot);
  void fail_all(ErrorKind kind, const char* why);
  bool fail(ErrorKind kind, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
  bool read_failed(int rv);
  void consume(int64_t stream_id, size_t n);
  void stream_done(int64_t stream_id, Slot& slot);
  void stream_closed(int64_t stream_id, uint64_t app_error, Slot& slot);

  const RequestTemplates& templates_;
  RequestSink& sink_;
  unsigned streams_;
  bool one_request_;
  bool hq_;
  bool hq_ready_ = false;  // hq: the 1-RTT keys are in, requests may go
  const std::string& save_dir_;
  ngtcp2_conn* conn_ = nullptr;
  nghttp3_conn* h3_ = nullptr;
  gnutls_session_t tls_ = nullptr;
  ngtcp2_crypto_conn_ref conn_ref_{};
  ngtcp2_path_storage path_{};  // the connected socket's addresses
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;  // indexes of free slots
  unsigned active_ = 0;
  uint32_t next_url_ = 0;
  uint64_t answered_ = 0;  // responses on this connection
  uint64_t bytes_received_ = 0;
  uint64_t bytes_sent_ = 0;
  bool submitted_ = false;
  bool handshake_done_ = false;
  bool draining_ = false;  // GOAWAY received
  int64_t goaway_id_ = INT64_MAX;  // streams from this id on were not processed
  bool failed_ = false;
  bool clean_ = false;
  ErrorKind error_kind_ = ErrorKind::protocol;
  char error_[160] = "";
  char why_[96] = "";  // the text of the last stream reset
};

}  // namespace torii::load
