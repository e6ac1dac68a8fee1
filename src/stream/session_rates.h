// proxy_upload_rate / proxy_download_rate of one session, TCP or UDP:
// each direction's RateLimit (nginx's arithmetic, rate_limit.h), whether
// it rests, and the timer that ends its rest; when one ends, `rested`
// tells the session, which reads that direction again. As nginx,
// proxy_timeout does not run while a direction rests (the session asks
// `resting()`).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/event_loop.h"
#include "stream/rate_limit.h"

namespace torii::stream {

class SessionRates {
 public:
  enum Way : uint8_t { upload, download };  // client -> upstream, upstream -> client
  using Rested = void (*)(void* owner);

  SessionRates(core::EventLoop& loop, Rested rested, void* owner);
  ~SessionRates();
  SessionRates(const SessionRates&) = delete;
  SessionRates& operator=(const SessionRates&) = delete;

  // The rates (bytes a second, 0: none) and the start of their count.
  void start(uint64_t upload_rate, uint64_t download_rate, int64_t now_ms);
  // How many bytes `way` may read now, at most `room`, `received` having
  // been read so far; 0 while it rests, or when it must rest first (then
  // it does).
  size_t allowance(Way way, uint64_t received, size_t room);
  // `n` bytes were read: the direction rests n * 1000 / rate ms.
  void after_read(Way way, size_t n);
  bool resting(Way way) const { return flow(way).resting; }
  bool resting() const { return up_.resting || down_.resting; }
  // The session ends: no rest ends any more.
  void stop();

 private:
  struct Flow {
    Flow(SessionRates* r) : rates(r), timer(&SessionRates::on_timer, this) {}
    SessionRates* rates;
    RateLimit rate;
    bool resting = false;
    core::Timer timer;
  };
  static void on_timer(void* flow);
  Flow& flow(Way way) { return way == upload ? up_ : down_; }
  const Flow& flow(Way way) const { return way == upload ? up_ : down_; }
  void rest(Flow& f, int64_t ms);

  core::EventLoop& loop_;
  Rested rested_;
  void* owner_;
  Flow up_{this};
  Flow down_{this};
};

}  // namespace torii::stream
