// One request stream of an hq-interop connection (HTTP/0.9 over QUIC, the
// ALPN interoperability tests use, `http3_hq on`): the client sends
// "GET /path\r\n" and its FIN, the server answers with the body alone and
// its FIN. The request runs through the same Exchange and pipeline as an
// HTTP/3 one (static files, proxy, return...); only the framing differs:
// no head goes out, only body bytes.
//
// QUIC keeps pointers to the bytes until the client acknowledges them (it
// may send them again), so the response waits in two places: pieces not
// yet handed over (memory, file ranges), and chunks handed to ngtcp2,
// released by acknowledgements. At most http3_stream_buffer_size bytes are
// unacknowledged per stream, and both count in queued_bytes(), so a slow
// reader holds back a streaming handler instead of growing our memory.
#pragma once

#include <ngtcp2/ngtcp2.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/exchange.h"
#include "http/response.h"

namespace torii::http3 {

class HqSession;

class HqStream final : public http::ResponseSink {
 public:
  HqStream(HqSession& owner, int64_t id);
  ~HqStream() override;
  HqStream(const HqStream&) = delete;
  HqStream& operator=(const HqStream&) = delete;

  int64_t id() const { return id_; }

  // ---- request ---------------------------------------------------------------
  enum class Input : uint8_t {
    more,     // no whole request line yet
    ready,    // a valid HTTP/0.9 request line: run() it
    invalid,  // not HTTP/0.9 (or too long, or the stream ended first)
  };
  // Request bytes; `limit` bounds the request line (large_client_header_buffers).
  Input on_data(const uint8_t* data, size_t len, bool fin, size_t limit);
  void mark_early_data() { early_data_ = true; }
  bool remote_closed() const { return remote_closed_; }
  void run();
  bool started() const { return exchange_.has_value(); }

  // ---- response, pulled by the session's packet writer ---------------------
  // Points `vec` at bytes not yet handed to QUIC; `fin`: they end the stream.
  size_t pending(ngtcp2_vec* vec, size_t veccnt, bool& fin);
  // QUIC took `n` of those bytes (and the FIN, when `fin` was asked and
  // nothing is left).
  void written(size_t n, bool fin);
  // Bytes (or the FIN alone) wait to be handed over.
  bool has_output();
  void on_acked(uint64_t n);
  // QUIC closed the stream (response acknowledged, or reset).
  void on_close();
  bool closed() const { return closed_; }
  bool drain_due() const;
  void fire_drain();

  // ---- ResponseSink --------------------------------------------------------
  void send_head(const http::ResponseHead& head) override;
  void send_body(std::string_view data) override;
  void send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) override;
  void finish() override;
  void abort() override;
  size_t queued_bytes() const override { return queued_memory_ + size_t(end_ - acked_); }
  void set_drain_callback(std::function<void()> cb) override;

 private:
  struct Piece {
    std::string data;
    std::shared_ptr<const http::OpenFile> file;
    int64_t offset = 0;
    int64_t length = 0;
  };
  // Bytes handed (or about to be handed) to QUIC, in stream order.
  struct Chunk {
    std::string data;
    std::shared_ptr<const http::OpenFile> file;  // bytes that are the open-file cache's copy
    const char* ptr = nullptr;
    size_t len = 0;
  };

  bool parse_line(std::string_view line);
  bool take_pieces();
  void output_changed();
  void reset(uint64_t app_error);

  HqSession& owner_;
  int64_t id_;

  // Request.
  std::string line_;  // the request line as received
  std::string_view target_;
  bool early_data_ = false;
  bool remote_closed_ = false;
  bool request_complete_ = false;
  std::optional<http::Exchange> exchange_;

  // Response.
  bool head_ = false;
  std::deque<Piece> pieces_;
  size_t queued_memory_ = 0;
  std::deque<Chunk> chunks_;
  uint64_t chunks_start_ = 0;  // stream offset of chunks_.front()
  uint64_t end_ = 0;           // stream offset after the last chunk
  uint64_t written_ = 0;       // handed to QUIC
  uint64_t acked_ = 0;
  std::vector<std::string> spare_;  // file-read buffers to reuse
  bool finished_ = false;
  bool fin_written_ = false;
  bool closed_ = false;
  std::function<void()> drain_cb_;
};

}  // namespace torii::http3
