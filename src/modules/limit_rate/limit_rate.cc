#include "modules/limit_rate/limit_rate.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <string>

#include "config/directives.h"
#include "core/event_loop.h"
#include "core/timer_wheel.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/variables.h"
#include "log/error_log.h"
#include "modules/limit_req/limit_req.h"

namespace torii::limits {

namespace {

// Bytes handed to the codec at a time: small enough that the pace is
// smooth, large enough that a fast rate does not mean a timer per packet.
constexpr int64_t kMinSliceMs = 10;

class RateSink : public http::ResponseSink, public std::enable_shared_from_this<RateSink> {
 public:
  RateSink(http::Exchange& ex, http::ResponseSink& next, int64_t rate, int64_t after)
      : ex_(ex), next_(next), rate_(rate), after_(after), start_ms_(loop_now_ms(ex)) {}

  void send_head(const http::ResponseHead& head) override { next_.send_head(head); }

  void send_body(std::string_view data) override {
    if (data.empty()) return;
    pending_bytes_ += int64_t(data.size());
    pending_.push_back({nullptr, 0, int64_t(data.size()), std::string(data)});
    pump();
  }

  void send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) override {
    if (length <= 0) return;
    pending_bytes_ += length;
    pending_.push_back({std::move(file), offset, length, {}});
    pump();
  }

  void finish() override {
    finish_wanted_ = true;
    pump();
  }

  void abort() override {
    pending_.clear();
    pending_bytes_ = 0;
    ex_.services().loop->cancel(timer_);
  }

  // Trailers wait in the codec's sink for its last frame or chunk.
  void set_trailers(std::vector<std::pair<std::string, std::string>> trailers) override {
    next_.set_trailers(std::move(trailers));
  }
  void read_body(http::BodyReader* reader) override { next_.read_body(reader); }
  void resume_body() override { next_.resume_body(); }

  // The handler paces on what waits here too, so an upstream is read only
  // as fast as the client is allowed to get it.
  size_t queued_bytes() const override { return size_t(pending_bytes_) + next_.queued_bytes(); }

  void set_drain_callback(std::function<void()> cb) override {
    if (pending_bytes_ > 0) {
      handler_drain_ = std::move(cb);  // handed on once what waits here has left
      return;
    }
    next_.set_drain_callback(std::move(cb));
  }

 private:
  struct Piece {
    std::shared_ptr<const http::OpenFile> file;  // null: `data`
    int64_t offset = 0;
    int64_t length = 0;
    std::string data;
  };

  static void on_timer(void* p) { static_cast<RateSink*>(p)->pump(); }

  // nginx's allowance: rate * (seconds since start + 1) after the free
  // `limit_rate_after` bytes, less what has left.
  int64_t allowance(int64_t now) const {
    int64_t elapsed = std::max<int64_t>(0, now - start_ms_);
    return rate_ * (elapsed + 1000) / 1000 + after_ - sent_;
  }

  void pump() {
    int64_t now = loop_now_ms(ex_);
    int64_t allowed = allowance(now);
    while (!pending_.empty() && allowed > 0) {
      Piece& p = pending_.front();
      int64_t n = std::min(p.length, allowed);
      if (p.file) {
        next_.send_file(p.file, p.offset, n);
        p.offset += n;
      } else if (n == p.length) {
        next_.send_body(p.data);
      } else {
        next_.send_body(std::string_view(p.data).substr(0, size_t(n)));
        p.data.erase(0, size_t(n));
      }
      p.length -= n;
      sent_ += n;
      allowed -= n;
      pending_bytes_ -= n;
      if (p.length == 0) pending_.pop_front();
    }
    if (!pending_.empty()) {
      // Wait until a slice's worth is allowed (or all that is left).
      int64_t want = std::min<int64_t>(pending_bytes_, std::max<int64_t>(1, rate_ * kMinSliceMs / 1000));
      int64_t wait = (want - allowed) * 1000 / rate_ + 1;
      ex_.services().loop->arm(timer_, std::max<int64_t>(wait, 1));
      return;
    }
    if (handler_drain_) {
      auto cb = std::move(handler_drain_);
      handler_drain_ = nullptr;
      next_.set_drain_callback(std::move(cb));
    }
    if (finish_wanted_ && !finished_) {
      finished_ = true;
      ex_.finish_paced();  // the codec's finish, and the exchange marked finished
    }
  }

  http::Exchange& ex_;
  http::ResponseSink& next_;
  const int64_t rate_;
  const int64_t after_;
  const int64_t start_ms_;
  int64_t sent_ = 0;
  int64_t pending_bytes_ = 0;
  std::deque<Piece> pending_;
  std::function<void()> handler_drain_;
  bool finish_wanted_ = false;
  bool finished_ = false;
  core::Timer timer_{&RateSink::on_timer, this};
};

}  // namespace

namespace {

// A limit_rate or limit_rate_after value with variables, rendered now; an
// empty or invalid one is no limit.
int64_t rendered_size(const http::Exchange& ex, const config::Template& t) {
  const std::string value = http::render(t, ex);
  int64_t v = 0;
  if (!value.empty() && !config::parse_size(value, v)) {
    TORII_LOG_EX(ex, error, "invalid size \"%s\"%s", value.c_str(), http::log_context(ex).c_str());
    return 0;
  }
  return v;
}

}  // namespace

int64_t effective_limit_rate(const http::Exchange& ex) {
  if (ex.access.limit_rate >= 0) return ex.access.limit_rate;
  if (!ex.server) return 0;
  const config::LimitsSettings& l = ex.settings().limits;
  return l.rate_template.empty() ? l.rate : rendered_size(ex, l.rate_template);
}

void set_limit_rate(http::Exchange& ex, std::string_view value) {
  int64_t v = 0;
  if (!config::parse_size(value, v)) {
    TORII_LOG_EX(ex, error, "invalid size \"%.*s\"%s", int(value.size()), value.data(), http::log_context(ex).c_str());
    return;
  }
  ex.access.limit_rate = v;
}

std::shared_ptr<http::ResponseSink> make_rate_sink(http::Exchange& ex, http::ResponseSink& next) {
  int64_t rate = effective_limit_rate(ex);
  if (rate <= 0 || !ex.services().loop || ex.header_only) return nullptr;
  const config::LimitsSettings& l = ex.settings().limits;
  const int64_t after = ex.access.limit_rate_after >= 0 ? ex.access.limit_rate_after
                        : l.rate_after_template.empty() ? l.rate_after
                                                        : rendered_size(ex, l.rate_after_template);
  return std::make_shared<RateSink>(ex, next, rate, after);
}

}  // namespace torii::limits
