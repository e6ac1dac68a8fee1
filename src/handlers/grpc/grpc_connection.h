// An HTTP/2 connection to a gRPC upstream: the nghttp2 client session,
// which holds what the next call needs (HPACK tables, the next stream id,
// both windows, the peer's SETTINGS), so that a call on a kept connection
// opens its stream without a new preface or SETTINGS. The codec of the
// call that uses the connection owns it (and is the session's callbacks'
// `codec()`); between calls the keep-alive pool does, and what the upstream
// sends then goes through idle_input().
#pragma once

#include <nghttp2/nghttp2.h>

#include <string>
#include <string_view>

#include "upstream/connection_state.h"

namespace torii::handlers::grpc {

class GrpcCodec;

class GrpcConnection final : public upstream::ConnectionState {
 public:
  // A new client session whose callbacks get this object as user data.
  explicit GrpcConnection(const nghttp2_session_callbacks* callbacks);
  ~GrpcConnection() override;
  GrpcConnection(const GrpcConnection&) = delete;
  GrpcConnection& operator=(const GrpcConnection&) = delete;

  nghttp2_session* session() const { return session_; }
  GrpcCodec* codec() const { return codec_; }
  void set_codec(GrpcCodec* codec) { codec_ = codec; }

  // Called by the session's frame callback for every frame received.
  void on_frame(uint8_t type);
  bool goaway() const { return goaway_; }
  // It can carry another call: no GOAWAY, no error, stream ids left.
  bool open_for_calls() const;

  // Idle: PING, SETTINGS and WINDOW_UPDATE are the upstream's own traffic
  // and are answered (acknowledgements in `reply`); a GOAWAY, a frame for
  // a stream or a protocol error ends the connection.
  bool idle_input(std::string_view in, std::string& reply) override;

 private:
  nghttp2_session* session_ = nullptr;
  GrpcCodec* codec_ = nullptr;
  bool goaway_ = false;
  bool unexpected_ = false;  // a frame no idle connection expects
};

}  // namespace torii::handlers::grpc
