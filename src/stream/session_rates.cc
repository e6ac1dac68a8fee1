#include "stream/session_rates.h"

namespace torii::stream {

SessionRates::SessionRates(core::EventLoop& loop, Rested rested, void* owner)
    : loop_(loop), rested_(rested), owner_(owner) {}

SessionRates::~SessionRates() { stop(); }

void SessionRates::start(uint64_t upload_rate, uint64_t download_rate, int64_t now_ms) {
  up_.rate.start(upload_rate, now_ms);
  down_.rate.start(download_rate, now_ms);
}

size_t SessionRates::allowance(Way way, uint64_t received, size_t room) {
  Flow& f = flow(way);
  if (f.resting) return 0;
  int64_t delay = 0;
  const size_t allow = f.rate.allowance(received, loop_.now_ms(), room, delay);
  if (allow == 0) rest(f, delay);
  return allow;
}

void SessionRates::after_read(Way way, size_t n) {
  Flow& f = flow(way);
  if (const int64_t ms = f.rate.rest_after(n); ms > 0) rest(f, ms);
}

void SessionRates::stop() {
  loop_.cancel(up_.timer);
  loop_.cancel(down_.timer);
}

void SessionRates::rest(Flow& f, int64_t ms) {
  f.resting = true;
  loop_.arm(f.timer, ms);
}

void SessionRates::on_timer(void* flow) {
  auto* f = static_cast<Flow*>(flow);
  f->resting = false;
  f->rates->rested_(f->rates->owner_);
}

}  // namespace torii::stream
