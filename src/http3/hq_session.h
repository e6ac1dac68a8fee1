// The request streams of a QUIC connection whose client chose the
// hq-interop ALPN (`http3_hq on`): HTTP/0.9 on bidirectional streams, no
// HTTP/3 framing, no control or QPACK streams. The Session hands it the
// QUIC events of its streams instead of giving them to nghttp3, and asks it
// for stream data to put into packets.
//
// Errors follow nginx's hq mode: HTTP/3's error codes on the streams, a
// unidirectional stream closes the connection (H3_STREAM_CREATION_ERROR).
// Unlike nginx, which hands an hq stream to its HTTP/1 parser (a bad line
// gets an HTTP/1.x 400 page), a stream that is not a valid HTTP/0.9 request
// is reset with H3_MESSAGE_ERROR, RFC 9114 4.1.2's answer to a malformed
// request: HTTP/0.9 has no way to say 400.
#pragma once

#include <ngtcp2/ngtcp2.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

namespace torii::http3 {

class HqStream;
class Session;

class HqSession {
 public:
  explicit HqSession(Session& session);
  ~HqSession();
  HqSession(const HqSession&) = delete;
  HqSession& operator=(const HqSession&) = delete;

  Session& session() { return session_; }

  // ---- QUIC events, from the session's ngtcp2 callbacks ---------------------
  // Request bytes of a client's bidirectional stream; the session gives
  // their flow-control credit back (a request line is bounded).
  void on_stream_data(int64_t id, const uint8_t* data, size_t len, bool fin, bool early);
  void on_acked(int64_t id, uint64_t n);
  void on_stream_close(int64_t id);
  // The client abandoned the stream (RESET_STREAM or STOP_SENDING).
  void on_stream_reset(int64_t id);
  // Flow control let more of stream `id` out.
  void unblock(int64_t id);

  // ---- packet writing ---------------------------------------------------------
  // The next stream with bytes (or a FIN) to send: its id, and `vec`
  // pointing at them. 0 entries and id -1: nothing.
  size_t next(int64_t& id, bool& fin, ngtcp2_vec* vec, size_t veccnt);
  void written(int64_t id, size_t n, bool fin);
  void blocked(int64_t id);
  void shut(int64_t id);

  // ---- outside the libraries' callbacks --------------------------------------
  void run_ready();
  bool service();
  void stream_wants_write(HqStream& s);
  void stream_drain_due(HqStream& s);
  // No new streams (graceful stop, keepalive_requests): those in flight finish.
  void shutdown() { going_away_ = true; }
  size_t open_streams() const { return streams_.size(); }
  void abort_streams();
  void collect_closed();

 private:
  HqStream* find(int64_t id);

  Session& session_;
  std::unordered_map<int64_t, std::unique_ptr<HqStream>> streams_;
  std::vector<std::unique_ptr<HqStream>> graveyard_;
  std::vector<int64_t> ready_, drained_, batch_;
  std::deque<int64_t> writable_;  // streams that may have bytes to send, in turn
  bool going_away_ = false;
};

}  // namespace torii::http3
