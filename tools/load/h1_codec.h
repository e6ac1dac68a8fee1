// HTTP/1.1 client side of a connection: requests written from the prebuilt
// templates (cycling through the URLs), responses read in order. With a
// depth above 1 the requests are pipelined.
#pragma once

#include <vector>

#include "load/codec.h"
#include "load/h1_response_reader.h"
#include "load/request_template.h"

namespace torii::load {

class H1Codec final : public Codec {
 public:
  // `one_request`: the connection ends after its first response
  // (--connect-per-request).
  H1Codec(const RequestTemplates& templates, unsigned depth, bool one_request, RequestSink& sink);

  bool start() override;
  unsigned capacity() const override;
  void submit(int64_t from_ns, int64_t sent_ns) override;
  size_t produce(char* out, size_t cap) override;
  bool receive(const char* data, size_t len) override;
  void closed(bool eof, ErrorKind kind, const char* why) override;
  bool finished() const override { return finished_; }
  size_t outstanding() const override { return count_; }
  int64_t oldest_sent() const override;

 private:
  struct Pending {
    int64_t from_ns;
    int64_t sent_ns;
    uint32_t url;
  };
  Pending& at(size_t i) { return ring_[(head_ + i) % ring_.size()]; }
  const Pending& at(size_t i) const { return ring_[(head_ + i) % ring_.size()]; }
  void pop_front();
  void fail_all(ErrorKind kind, const char* why);

  const RequestTemplates& templates_;
  RequestSink& sink_;
  bool one_request_;
  H1ResponseReader reader_;
  std::vector<Pending> ring_;  // outstanding requests, oldest first
  size_t head_ = 0;
  size_t count_ = 0;
  size_t unwritten_ = 0;   // how many of the newest outstanding are not fully produced
  size_t offset_ = 0;      // into the first of those
  uint32_t next_url_ = 0;
  bool finished_ = false;  // the server closes, or one request is done
};

}  // namespace torii::load
