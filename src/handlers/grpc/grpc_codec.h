// gRPC to the upstream (grpc_pass): one HTTP/2 stream at a time on a
// connection, through an nghttp2 client session kept in memory (bytes in,
// bytes out: no socket here). A connection that ended a call cleanly goes
// back to the keep-alive pool with its session (grpc_connection.h), and the
// next call on it opens the next stream. The request head is the proxy's (the same
// grpc_set_header defaults and hop-by-hop rules) turned into HTTP/2
// fields, with "te: trailers"; the body goes as DATA frames under the
// upstream's flow control, streamed both ways; the response's trailers
// (grpc-status, grpc-message) are handed to the client's HTTP/2 stream.
#pragma once

#include <nghttp2/nghttp2.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/proxy_config.h"
#include "handlers/grpc/grpc_connection.h"
#include "handlers/upstream_codec.h"

namespace torii::http {
class Exchange;
}

namespace torii::handlers::grpc {

class GrpcCodec final : public UpstreamCodec {
 public:
  GrpcCodec(const http::Exchange& ex, const config::ProxyConfig& cfg);
  // Without a request (the fuzz target): only the response side is used.
  explicit GrpcCodec(const config::ProxyConfig& cfg) : ex_(nullptr), cfg_(cfg) {}
  ~GrpcCodec() override;
  GrpcCodec(const GrpcCodec&) = delete;
  GrpcCodec& operator=(const GrpcCodec&) = delete;

  const char* scheme() const override { return cfg_.ssl ? "grpcs" : "grpc"; }
  std::string_view log_uri() const override { return uri_; }
  bool streams_unknown_length() const override { return true; }
  bool full_duplex() const override { return true; }
  std::string_view alpn() const override { return {"\x02h2", 3}; }
  bool request_head(RequestBody body, int64_t length, std::string& out) override;
  void body_piece(std::string_view data, std::string& out) override;
  void body_end(std::string& out) override;
  void take_output(std::string& out) override { produce(out); }
  size_t buffered() const override { return pending_.size() - pending_off_; }

  void reset() override;
  http1::ParseStatus parse_head(std::string_view in, http1::ParsedResponse& out, size_t& consumed) override;
  const char* error() const override { return error_; }
  http1::BodyFraming start_body(const http1::ParsedResponse&, bool) override { return http1::BodyFraming::close; }
  Body feed_body(std::string_view in, size_t& consumed, const std::function<void(std::string_view)>& emit) override;
  bool ends_at_eof() const override { return false; }
  bool reusable(const http1::ParsedResponse&) const override;
  bool take_trailers(std::vector<std::pair<std::string, std::string>>& out) override;
  bool unprocessed() const override { return refused_; }
  bool holds_whole_body() const override { return !trimmed_; }
  bool adopt_connection(std::unique_ptr<upstream::ConnectionState>& state) override;
  std::unique_ptr<upstream::ConnectionState> detach_connection() override;

 private:
  static ssize_t read_body(nghttp2_session*, int32_t, uint8_t* buf, size_t length, uint32_t* flags,
                           nghttp2_data_source* source, void* user);
  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name, size_t namelen,
                       const uint8_t* value, size_t valuelen, uint8_t flags, void* user);
  static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user);
  static int on_data_chunk(nghttp2_session*, uint8_t flags, int32_t stream_id, const uint8_t* data, size_t len,
                           void* user);
  static int on_stream_close(nghttp2_session*, int32_t stream_id, uint32_t error_code, void* user);

  // The request's HEADERS on the connection's session (a new connection's
  // starts with the preface and SETTINGS); nothing before the try knows
  // its connection.
  void start_session();
  void new_session();  // a new connection's: the preface and our SETTINGS go first
  bool receive(std::string_view in);  // false: a protocol error (error_ says which)
  void produce(std::string& out);

  const http::Exchange* ex_;
  const config::ProxyConfig& cfg_;
  std::string uri_;
  std::unique_ptr<GrpcConnection> conn_;
  nghttp2_session* session_ = nullptr;  // conn_'s
  bool connection_known_ = false;       // adopt_connection() ran for this try
  int32_t stream_ = -1;

  std::vector<std::pair<std::string, std::string>> request_fields_;
  // Request body bytes waiting for the upstream's window.
  std::string pending_;
  size_t pending_off_ = 0;
  bool body_done_ = false;
  bool has_body_ = false;
  bool trimmed_ = false;  // pending_ lost bytes already sent: the body cannot go again

  // Response.
  enum class Stage : uint8_t { head, body, trailers, closed };
  Stage stage_ = Stage::head;
  int status_ = 0;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::vector<std::pair<std::string, std::string>> trailers_;
  bool head_done_ = false;
  std::string body_;  // DATA received and not yet emitted
  bool closed_ = false;
  uint32_t close_error_ = 0;
  bool goaway_ = false;   // the upstream is closing the connection: not kept
  bool refused_ = false;  // our stream was not processed (see unprocessed())
  const char* error_ = "";
};

}  // namespace torii::handlers::grpc
