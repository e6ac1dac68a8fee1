#include "http3/hq_session.h"

#include <algorithm>

#include "http3/hq_stream.h"
#include "http3/session.h"
#include "log/error_log.h"

namespace torii::http3 {

namespace {

// HTTP/3's codes, which nginx's hq mode uses too (RFC 9114 8.1).
constexpr uint64_t kH3RequestRejected = 0x010b;
constexpr uint64_t kH3MessageError = 0x010e;

}  // namespace

HqSession::HqSession(Session& session) : session_(session) {}

HqSession::~HqSession() = default;

HqStream* HqSession::find(int64_t id) {
  const auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : it->second.get();
}

void HqSession::on_stream_data(int64_t id, const uint8_t* data, size_t len, bool fin, bool early) {
  // Bytes are ours to acknowledge at once: a request line is bounded, and
  // whatever follows it is dropped (HTTP/0.9 has no body).
  session_.consume(id, len);
  HqStream* s = find(id);
  if (!s) {
    if (going_away_) {
      // Graceful stop: no new requests (RFC 9114 4.1.1's code for "not processed").
      session_.reset_stream(id, kH3RequestRejected);
      return;
    }
    auto owned = std::make_unique<HqStream>(*this, id);
    s = owned.get();
    streams_.emplace(id, std::move(owned));
  }
  if (early) s->mark_early_data();
  if (s->started()) return;
  switch (s->on_data(data, len, fin, session_.request_line_limit())) {
    case HqStream::Input::more:
      return;
    case HqStream::Input::ready:
      ready_.push_back(id);
      return;
    case HqStream::Input::invalid:
      TORII_LOG(info, "client sent invalid HTTP/0.9 request on hq-interop stream %lld, client: %s",
                static_cast<long long>(id), session_.info().remote_addr.c_str());
      session_.reset_stream(id, kH3MessageError);
      return;
  }
}

void HqSession::on_acked(int64_t id, uint64_t n) {
  if (HqStream* s = find(id)) s->on_acked(n);
}

void HqSession::on_stream_close(int64_t id) {
  if (auto it = streams_.find(id); it != streams_.end()) {
    it->second->on_close();
    graveyard_.push_back(std::move(it->second));
    streams_.erase(it);
  }
}

void HqSession::on_stream_reset(int64_t id) {
  HqStream* s = find(id);
  if (!s || s->closed()) return;
  // A client that gives up on its request wants no answer either.
  session_.reset_stream(id, 0x010c);  // H3_REQUEST_CANCELLED
}

void HqSession::unblock(int64_t id) {
  if (HqStream* s = find(id)) stream_wants_write(*s);
}

size_t HqSession::next(int64_t& id, bool& fin, ngtcp2_vec* vec, size_t veccnt) {
  while (!writable_.empty()) {
    HqStream* s = find(writable_.front());
    if (!s || s->closed() || !s->has_output()) {
      writable_.pop_front();
      continue;
    }
    id = s->id();
    return s->pending(vec, veccnt, fin);
  }
  id = -1;
  fin = false;
  return 0;
}

void HqSession::written(int64_t id, size_t n, bool fin) {
  HqStream* s = find(id);
  if (!s) return;
  s->written(n, fin);
  // Streams take turns, a packet's worth each.
  if (!writable_.empty() && writable_.front() == id) {
    writable_.pop_front();
    if (s->has_output()) writable_.push_back(id);
  }
}

void HqSession::blocked(int64_t id) {
  // Its flow-control window is shut: extend_max_stream_data brings it back.
  writable_.erase(std::remove(writable_.begin(), writable_.end(), id), writable_.end());
}

void HqSession::shut(int64_t id) { blocked(id); }

void HqSession::run_ready() {
  if (ready_.empty()) return;
  batch_.clear();
  batch_.swap(ready_);
  for (int64_t id : batch_) {
    HqStream* s = find(id);
    if (!s || s->closed() || s->started()) continue;
    session_.count_request();
    s->run();
  }
  batch_.clear();
}

bool HqSession::service() {
  bool ran = false;
  while (!drained_.empty()) {
    batch_.clear();
    batch_.swap(drained_);
    for (int64_t id : batch_) {
      HqStream* s = find(id);
      if (s && s->drain_due()) {
        s->fire_drain();
        ran = true;
      }
    }
    batch_.clear();
  }
  return ran;
}

void HqSession::stream_wants_write(HqStream& s) {
  if (std::find(writable_.begin(), writable_.end(), s.id()) == writable_.end()) writable_.push_back(s.id());
  session_.host().wake();
}

void HqSession::stream_drain_due(HqStream& s) {
  drained_.push_back(s.id());
  session_.host().wake();
}

void HqSession::collect_closed() { graveyard_.clear(); }

void HqSession::abort_streams() {
  for (auto& [id, s] : streams_)
    if (!s->closed()) s->on_close();
}

}  // namespace torii::http3
