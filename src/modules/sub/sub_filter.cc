#include "modules/sub/sub_filter.h"

#include <strings.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "config/sub_filter_config.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/piece_queue.h"
#include "http/variables.h"
#include "log/error_log.h"
#include "modules/sub/sub_matcher.h"

namespace torii::sub {

namespace {

// A file is read and searched in slices of this size, and only while the
// sink below holds less than kQueueMark bytes: a large file never sits in
// memory whole.
constexpr size_t kSlice = 64 * 1024;
constexpr size_t kQueueMark = 256 * 1024;

void lower_ascii(std::string& s) {
  for (auto& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c | 0x20);
}

}  // namespace

class SubSink final : public http::ResponseSink, public std::enable_shared_from_this<SubSink> {
 public:
  SubSink(http::Exchange& ex, std::vector<std::string> patterns, std::vector<const config::Template*> replacements,
          bool once)
      : ex_(ex), matcher_(std::move(patterns), once), replacements_(std::move(replacements)),
        rendered_(replacements_.size()) {}

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
    search(data);
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

  // The exchange aborts the codec's sink itself.
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
  void search(std::string_view data) {
    out_.clear();
    matcher_.feed(data, out_, [this](size_t index, std::string& out) { out.append(replacement(index)); });
    if (!out_.empty()) next_->send_body(out_);
  }

  // nginx renders a replacement when its string is first found, and keeps it.
  const std::string& replacement(size_t index) {
    auto& r = rendered_[index];
    if (!r) r = http::render(*replacements_[index], ex_);
    return *r;
  }

  // Reads and searches queued pieces while the sink below has room; waits
  // for its drain callback otherwise. Ends the response when asked and done.
  void pump() {
    while (!pending_.empty() && !done_) {
      if (next_->queued_bytes() >= kQueueMark) {
        std::weak_ptr<SubSink> self = weak_from_this();
        next_->set_drain_callback([self] {
          if (auto s = self.lock()) s->pump();
        });
        return;
      }
      std::string_view slice;
      if (!pending_.front_slice(kSlice, slice)) {
        TORII_LOG(crit, "pread() failed in the sub filter (%s)%s", strerror(errno), http::log_context(ex_).c_str());
        done_ = true;
        pending_.clear();
        ex_.abort();
        return;
      }
      const size_t n = slice.size();
      search(slice);
      pending_.consume(n);
    }
    if (done_) return;
    if (finish_wanted_) {
      out_.clear();
      matcher_.finish(out_);
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
  Matcher matcher_;
  std::vector<const config::Template*> replacements_;  // by pattern, kept alive by the exchange's config
  std::vector<std::optional<std::string>> rendered_;
  std::shared_ptr<http::ResponseSink> filter_below_;
  http::ResponseSink* next_ = nullptr;
  http::PieceQueue pending_;
  std::function<void()> handler_drain_;
  std::string out_;
  bool finish_wanted_ = false;
  bool done_ = false;
};

namespace {

bool encoded(const http::ResponseHead& head) {
  const std::string* ce = head.find("Content-Encoding");
  return ce && !ce->empty() && strcasecmp(ce->c_str(), "identity") != 0;
}

}  // namespace

std::shared_ptr<SubSink> header_filter(http::Exchange& ex, http::ResponseHead& head) {
  const config::SubFilterConfig& cfg = *ex.settings().sub_filter;
  if (cfg.pairs.empty() || head.content_length == 0 || head.status == 101) return nullptr;
  const std::string* type = head.find("Content-Type");
  if (!type || !cfg.types.matches(*type)) return nullptr;
  if (encoded(head)) return nullptr;

  // Strings with variables are rendered now, once per response; one that
  // renders empty is left out (nginx's dynamic pairs).
  std::vector<std::string> patterns;
  std::vector<const config::Template*> replacements;
  for (const auto& pair : cfg.pairs) {
    std::string match;
    if (pair.match.is_constant()) {
      if (!pair.match.parts.empty()) match = pair.match.parts[0].literal;  // lower-cased at load
    } else {
      match = http::render(pair.match, ex);
      lower_ascii(match);
    }
    if (match.empty()) continue;
    patterns.push_back(std::move(match));
    replacements.push_back(&pair.replacement);
  }
  if (patterns.empty()) return nullptr;

  head.content_length = -1;
  head.remove("Content-Length");
  if (!cfg.last_modified) {
    head.remove("Last-Modified");
    head.remove("ETag");
  } else {
    http::weaken_etag(head);
  }
  if (ex.header_only) return nullptr;
  return std::make_shared<SubSink>(ex, std::move(patterns), std::move(replacements), cfg.once);
}

std::shared_ptr<http::ResponseSink> attach(std::shared_ptr<SubSink> sub, std::shared_ptr<http::ResponseSink> filter_below,
                                           http::ResponseSink& below) {
  sub->attach(std::move(filter_below), below);
  return sub;
}

}  // namespace torii::sub
