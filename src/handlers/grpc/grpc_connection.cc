#include "handlers/grpc/grpc_connection.h"

namespace torii::handlers::grpc {

namespace {

// nghttp2 opens no stream past 2^31-1 on a connection.
constexpr uint32_t kLastStreamId = 0x7fffffff;

}  // namespace

GrpcConnection::GrpcConnection(const nghttp2_session_callbacks* callbacks) {
  nghttp2_session_client_new(&session_, callbacks, this);
}

GrpcConnection::~GrpcConnection() { nghttp2_session_del(session_); }

void GrpcConnection::on_frame(uint8_t type) {
  if (type == NGHTTP2_GOAWAY) goaway_ = true;
  if (!codec_ && type != NGHTTP2_PING && type != NGHTTP2_SETTINGS && type != NGHTTP2_WINDOW_UPDATE)
    unexpected_ = true;
}

bool GrpcConnection::open_for_calls() const {
  return session_ && !goaway_ && !unexpected_ && nghttp2_session_want_read(session_) &&
         nghttp2_session_get_next_stream_id(session_) <= kLastStreamId;
}

bool GrpcConnection::idle_input(std::string_view in, std::string& reply) {
  const ssize_t rv = nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(in.data()), in.size());
  if (rv < 0 || !open_for_calls()) return false;
  for (;;) {
    const uint8_t* data = nullptr;
    const ssize_t n = nghttp2_session_mem_send(session_, &data);
    if (n < 0) return false;
    if (n == 0) break;
    reply.append(reinterpret_cast<const char*>(data), size_t(n));
  }
  return true;
}

}  // namespace torii::handlers::grpc
