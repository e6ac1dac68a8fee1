// HTTP/2 client side of a connection over an nghttp2 client session: up to
// `streams` requests in flight (fewer if the server's
// SETTINGS_MAX_CONCURRENT_STREAMS says so), each in a preallocated slot.
// Frames are written into the caller's buffer by nghttp2_session_send, so a
// batch of requests leaves in one write.
#pragma once

#include <nghttp2/nghttp2.h>

#include <vector>

#include "load/codec.h"
#include "load/request_template.h"

namespace torii::load {

class H2Codec final : public Codec {
 public:
  // `mem`: the thread's allocator, so steady-state streams reuse memory.
  H2Codec(const RequestTemplates& templates, unsigned streams, bool one_request, RequestSink& sink,
          nghttp2_mem* mem);
  ~H2Codec() override;
  H2Codec(const H2Codec&) = delete;
  H2Codec& operator=(const H2Codec&) = delete;

  bool start() override;
  unsigned capacity() const override;
  void submit(int64_t from_ns, int64_t sent_ns) override;
  size_t produce(char* out, size_t cap) override;
  bool receive(const char* data, size_t len) override;
  void closed(bool eof, ErrorKind kind, const char* why) override;
  bool finished() const override;
  size_t outstanding() const override { return active_; }
  int64_t oldest_sent() const override;

 private:
  struct Slot {
    int64_t from_ns = 0;
    int64_t sent_ns = 0;
    size_t body_offset = 0;
    int status = 0;
    bool used = false;
  };

  static const nghttp2_session_callbacks* callbacks();
  static int on_header(nghttp2_session*, const nghttp2_frame*, const uint8_t* name, size_t namelen,
                       const uint8_t* value, size_t valuelen, uint8_t flags, void* user);
  static int on_frame_recv(nghttp2_session*, const nghttp2_frame*, void* user);
  static int on_stream_close(nghttp2_session*, int32_t stream_id, uint32_t error_code, void* user);
  static ssize_t on_send(nghttp2_session*, const uint8_t* data, size_t len, int flags, void* user);
  static ssize_t read_body(nghttp2_session*, int32_t stream_id, uint8_t* buf, size_t len,
                           uint32_t* flags, nghttp2_data_source* source, void* user);

  void release(Slot& slot);
  void fail_all(ErrorKind kind, const char* why);
  void end_session();

  const RequestTemplates& templates_;
  RequestSink& sink_;
  unsigned streams_;
  bool one_request_;
  nghttp2_mem* mem_;
  nghttp2_session* session_ = nullptr;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;  // indexes of free slots
  unsigned active_ = 0;
  uint32_t next_url_ = 0;
  uint64_t answered_ = 0;  // responses on this connection
  bool submitted_ = false;
  bool draining_ = false;  // GOAWAY received or stream ids used up
  bool failed_ = false;
  char why_[96] = "";  // the text of the last stream reset
  // The buffer produce() is filling.
  char* out_ = nullptr;
  size_t out_cap_ = 0;
  size_t out_len_ = 0;
};

}  // namespace torii::load
