#include "modules/charset/charset_sink.h"

#include <cerrno>
#include <cstring>
#include <string>

#include "http/exchange.h"
#include "http/log_context.h"
#include "http/piece_queue.h"
#include "log/error_log.h"

namespace torii::charset {

namespace {

constexpr size_t kSlice = 64 * 1024;
constexpr size_t kQueueMark = 256 * 1024;

}  // namespace

class CharsetSink final : public http::ResponseSink, public std::enable_shared_from_this<CharsetSink> {
 public:
  CharsetSink(http::Exchange& ex, std::shared_ptr<const config::CharsetMap> map, Recoder::Direction direction)
      : ex_(ex), map_(std::move(map)), recoder_(*map_, direction) {}

  void attach(std::shared_ptr<http::ResponseSink> filter_below, http::ResponseSink& below) {
    filter_below_ = std::move(filter_below);
    next_ = filter_below_ ? filter_below_.get() : &below;
  }

  // The head goes to the codec from the exchange, not through here.
  void send_head(const http::ResponseHead&) override {}

  void send_body(std::string_view data) override {
    if (done_ || finish_wanted_) return;
    if (!pending_.empty()) {
      pending_.push_bytes(data);  // behind a file still read
      return;
    }
    recode(data);
  }

  void send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) override {
    if (done_ || finish_wanted_) return;
    pending_.push_file(std::move(file), offset, length);
    pump();
  }

  void finish() override {
    if (done_ || finish_wanted_) return;
    finish_wanted_ = true;
    pump();
  }

  void abort() override {
    done_ = true;
    pending_.clear();
    if (filter_below_) filter_below_->abort();
  }

  void set_trailers(std::vector<std::pair<std::string, std::string>> trailers) override {
    next_->set_trailers(std::move(trailers));
  }
  size_t queued_bytes() const override { return next_->queued_bytes(); }
  void set_drain_callback(std::function<void()> cb) override {
    if (!pending_.empty()) {
      handler_drain_ = std::move(cb);  // handed on once the files queued here are read
      return;
    }
    next_->set_drain_callback(std::move(cb));
  }

 private:
  void recode(std::string_view data) {
    out_.clear();
    recoder_.feed(data, out_);
    if (!out_.empty()) next_->send_body(out_);
  }

  // Reads and recodes queued pieces while the sink below has room; waits
  // for its drain callback otherwise. Ends the response when asked and done.
  void pump() {
    while (!pending_.empty() && !done_) {
      if (next_->queued_bytes() >= kQueueMark) {
        std::weak_ptr<CharsetSink> self = weak_from_this();
        next_->set_drain_callback([self] {
          if (auto s = self.lock()) s->pump();
        });
        return;
      }
      std::string_view slice;
      if (!pending_.front_slice(kSlice, slice)) {
        TORII_LOG(crit, "pread() failed in the charset filter (%s)%s", strerror(errno),
                  http::log_context(ex_).c_str());
        done_ = true;
        pending_.clear();
        ex_.abort();
        return;
      }
      const size_t n = slice.size();
      recode(slice);
      pending_.consume(n);
    }
    if (done_) return;
    if (finish_wanted_) {
      out_.clear();
      recoder_.finish(out_);
      if (!out_.empty()) next_->send_body(out_);
      done_ = true;
      if (filter_below_) {
        filter_below_->finish();  // it ends the response once its own output is out
      } else {
        ex_.finish_filtered();
      }
      return;
    }
    if (handler_drain_) next_->set_drain_callback(std::move(handler_drain_));
    handler_drain_ = nullptr;
  }

  http::Exchange& ex_;
  std::shared_ptr<const config::CharsetMap> map_;  // the recoder reads it
  Recoder recoder_;
  std::shared_ptr<http::ResponseSink> filter_below_;
  http::ResponseSink* next_ = nullptr;
  http::PieceQueue pending_;
  std::function<void()> handler_drain_;
  std::string out_;
  bool finish_wanted_ = false;
  bool done_ = false;
};

std::shared_ptr<CharsetSink> make_sink(http::Exchange& ex, std::shared_ptr<const config::CharsetMap> map,
                                       Recoder::Direction direction) {
  return std::make_shared<CharsetSink>(ex, std::move(map), direction);
}

std::shared_ptr<http::ResponseSink> attach(std::shared_ptr<CharsetSink> sink,
                                           std::shared_ptr<http::ResponseSink> filter_below, http::ResponseSink& below) {
  sink->attach(std::move(filter_below), below);
  return sink;
}

}  // namespace torii::charset
