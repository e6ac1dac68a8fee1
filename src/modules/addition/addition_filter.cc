#include "modules/addition/addition_filter.h"

#include <cerrno>
#include <cstring>

#include "config/ssi_config.h"
#include "core/event_loop.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "log/error_log.h"
#include "modules/ssi/ordered_output.h"
#include "modules/ssi/subrequest.h"

namespace torii::addition {

namespace {

constexpr size_t kQueueMark = 256 * 1024;

class AdditionSink final : public http::ResponseSink, public std::enable_shared_from_this<AdditionSink> {
 public:
  AdditionSink(http::Exchange& ex, const config::SsiConfig& cfg) : ex_(ex), cfg_(cfg) {}

  void attach(std::shared_ptr<http::ResponseSink> filter_below, http::ResponseSink& below) {
    filter_below_ = std::move(filter_below);
    next_ = filter_below_ ? filter_below_.get() : &below;
  }

  void send_head(const http::ResponseHead&) override {}
  void send_body(std::string_view data) override {
    if (done_ || finish_wanted_ || data.empty()) return;
    before();
    output_.push_text(data);
    pump();
  }
  void send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) override {
    if (done_ || finish_wanted_ || length <= 0) return;
    before();
    output_.push_file(std::move(file), offset, length);
    pump();
  }
  void finish() override {
    if (done_ || finish_wanted_) return;
    before();
    finish_wanted_ = true;
    if (!cfg_.after_body.empty()) add(cfg_.after_body);
    pump();
  }
  void abort() override {
    done_ = true;
    if (filter_below_) filter_below_->abort();
  }
  void set_trailers(std::vector<std::pair<std::string, std::string>> trailers) override {
    next_->set_trailers(std::move(trailers));
  }
  size_t queued_bytes() const override { return next_->queued_bytes(); }
  void set_drain_callback(std::function<void()> cb) override {
    if (!output_.empty()) {
      handler_drain_ = std::move(cb);
      return;
    }
    next_->set_drain_callback(std::move(cb));
  }

 private:
  // The before-body subrequest starts with the body, as nginx's.
  void before() {
    if (started_) return;
    started_ = true;
    if (!cfg_.before_body.empty()) add(cfg_.before_body);
  }

  void add(const std::string& uri) {
    const size_t q = uri.find('?');
    auto sub = std::make_shared<ssi::Subrequest>(ex_, uri.substr(0, q), q == std::string::npos ? "" : uri.substr(q + 1),
                                                 [self = weak_from_this()] {
                                                   if (auto s = self.lock()) s->pump();
                                                 });
    output_.push_include(sub);
    sub->start();
  }

  void pump() {
    if (done_ || pumping_) return;
    pumping_ = true;
    const auto r = output_.flush(*next_, kQueueMark, ex_);
    pumping_ = false;
    if (r == ssi::OrderedOutput::Flush::failed) {
      TORII_LOG_EX(ex_, crit, "pread() failed in the addition filter (%s)%s", strerror(errno), http::log_context(ex_).c_str());
      done_ = true;
      ex_.abort();
      return;
    }
    if (r == ssi::OrderedOutput::Flush::sink_full) {
      next_->set_drain_callback([self = weak_from_this()] {
        if (auto s = self.lock()) s->pump();
      });
      return;
    }
    if (r == ssi::OrderedOutput::Flush::waiting) return;  // the include's next change pumps again
    if (finish_wanted_) {
      done_ = true;
      if (filter_below_) {
        filter_below_->finish();
      } else {
        ex_.finish_filtered();
      }
      return;
    }
    if (handler_drain_) {
      next_->set_drain_callback(std::move(handler_drain_));
      handler_drain_ = nullptr;
    }
  }

  http::Exchange& ex_;
  const config::SsiConfig& cfg_;
  std::shared_ptr<http::ResponseSink> filter_below_;
  http::ResponseSink* next_ = nullptr;
  ssi::OrderedOutput output_;
  std::function<void()> handler_drain_;
  bool started_ = false;
  bool finish_wanted_ = false;
  bool done_ = false;
  bool pumping_ = false;
};

}  // namespace

std::shared_ptr<http::ResponseSink> header_filter(http::Exchange& ex, http::ResponseHead& head) {
  const config::SsiConfig& cfg = *ex.settings().ssi;
  if (head.status != 200 || ex.subrequest_depth > 0) return nullptr;
  if (cfg.before_body.empty() && cfg.after_body.empty()) return nullptr;
  const std::string* type = head.find("Content-Type");
  if (!type || !cfg.addition_types.matches(*type)) return nullptr;
  head.content_length = -1;
  head.remove("Content-Length");
  head.remove("Accept-Ranges");
  http::weaken_etag(head);
  if (ex.header_only) return nullptr;
  return std::make_shared<AdditionSink>(ex, cfg);
}

std::shared_ptr<http::ResponseSink> attach(std::shared_ptr<http::ResponseSink> addition,
                                           std::shared_ptr<http::ResponseSink> filter_below, http::ResponseSink& below) {
  static_cast<AdditionSink&>(*addition).attach(std::move(filter_below), below);
  return addition;
}

}  // namespace torii::addition
