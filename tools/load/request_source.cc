#include "load/request_source.h"

namespace torii::load {

RequestSource::RequestSource(uint64_t limit) : limit_(limit) {}

RequestSource::RequestSource(RateSchedule schedule) : schedule_(schedule) {}

void RequestSource::start(int64_t start_ns) {
  if (schedule_) schedule_->start(start_ns);
}

bool RequestSource::available(int64_t now_ns) const {
  if (!given_back_.empty()) return true;
  if (schedule_) return schedule_->due(now_ns);
  return taken_ < limit_;
}

int64_t RequestSource::take(int64_t now_ns) {
  if (!given_back_.empty()) {
    int64_t from = given_back_.back();
    given_back_.pop_back();
    return from;
  }
  if (schedule_) return schedule_->take();
  ++taken_;
  return now_ns;
}

void RequestSource::give_back(int64_t from_ns) {
  if (schedule_) {
    given_back_.push_back(from_ns);
  } else {
    // Closed loop: it goes again as a new request, timed from when it leaves.
    --taken_;
  }
}

bool RequestSource::exhausted() const {
  if (!given_back_.empty()) return false;
  if (schedule_) return schedule_->exhausted();
  return taken_ >= limit_;
}

int64_t RequestSource::next_due() const {
  if (!given_back_.empty()) return INT64_MIN;
  return schedule_ ? schedule_->next_due() : INT64_MAX;
}

uint64_t RequestSource::waiting(int64_t now_ns) const {
  return given_back_.size() + (schedule_ ? schedule_->waiting(now_ns) : 0);
}

}  // namespace torii::load
