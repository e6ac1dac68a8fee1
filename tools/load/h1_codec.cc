#include "load/h1_codec.h"

#include <algorithm>
#include <cstring>

namespace torii::load {

H1Codec::H1Codec(const RequestTemplates& templates, unsigned depth, bool one_request, RequestSink& sink)
    : templates_(templates), sink_(sink), one_request_(one_request), ring_(depth ? depth : 1) {}

bool H1Codec::start() {
  head_ = count_ = unwritten_ = offset_ = 0;
  finished_ = false;
  reader_.begin(templates_.head_request);
  return true;
}

unsigned H1Codec::capacity() const {
  if (finished_ || (one_request_ && count_ > 0)) return 0;
  return unsigned(ring_.size() - count_);
}

void H1Codec::submit(int64_t from_ns, int64_t sent_ns) {
  at(count_) = Pending{from_ns, sent_ns, next_url_};
  next_url_ = uint32_t((next_url_ + 1) % templates_.h1.size());
  ++count_;
  ++unwritten_;
}

size_t H1Codec::produce(char* out, size_t cap) {
  size_t n = 0;
  while (unwritten_ > 0 && n < cap) {
    const std::string& request = templates_.h1[at(count_ - unwritten_).url];
    size_t chunk = std::min(cap - n, request.size() - offset_);
    std::memcpy(out + n, request.data() + offset_, chunk);
    n += chunk;
    offset_ += chunk;
    if (offset_ == request.size()) {
      offset_ = 0;
      --unwritten_;
    }
  }
  return n;
}

void H1Codec::pop_front() {
  head_ = (head_ + 1) % ring_.size();
  --count_;
  reader_.begin(templates_.head_request);
}

bool H1Codec::receive(const char* data, size_t len) {
  while (len > 0 && !finished_) {
    if (count_ == 0) {
      fail_all(ErrorKind::protocol, "response bytes without a request");
      return false;
    }
    size_t used = reader_.feed(data, len);
    data += used;
    len -= used;
    if (reader_.state() == H1ResponseReader::State::error) {
      fail_all(ErrorKind::protocol, reader_.error());
      return false;
    }
    if (reader_.state() != H1ResponseReader::State::done) break;
    int status = reader_.status();
    bool keep_alive = reader_.keep_alive();
    int64_t from = at(0).from_ns;
    pop_front();
    sink_.completed(from, status);
    if (!keep_alive || one_request_) {
      // The server closes after this response (or we do): requests
      // pipelined behind it were never handled, so they go again.
      finished_ = true;
      while (count_ > 0) {
        int64_t again = at(0).from_ns;
        pop_front();
        sink_.retry(again);
      }
      unwritten_ = offset_ = 0;
    }
  }
  return true;
}

void H1Codec::closed(bool eof, ErrorKind kind, const char* why) {
  if (eof && count_ > 0) {
    reader_.on_eof();
    if (reader_.state() == H1ResponseReader::State::done) {
      int64_t from = at(0).from_ns;
      int status = reader_.status();
      pop_front();
      sink_.completed(from, status);
    }
    if (count_ > 0) {
      fail_all(ErrorKind::reset, "connection closed before the response was complete");
    }
  } else {
    fail_all(kind, why);
  }
  finished_ = true;
}

void H1Codec::fail_all(ErrorKind kind, const char* why) {
  while (count_ > 0) {
    int64_t from = at(0).from_ns;
    pop_front();
    sink_.failed(from, kind, why);
  }
  unwritten_ = offset_ = 0;
  finished_ = true;
}

int64_t H1Codec::oldest_sent() const { return count_ ? at(0).sent_ns : INT64_MAX; }

}  // namespace torii::load
