#include "modules/ssi/ssi_filter.h"

#include <cerrno>
#include <cstring>

#include "core/event_loop.h"
#include "http/log_context.h"
#include "log/error_log.h"
#include "modules/ssi/ssi_sink.h"

namespace torii::ssi {

namespace {

// The body is parsed in slices of this size, and only while the sink below
// holds less than kQueueMark bytes: a large file never sits in memory whole.
constexpr size_t kSlice = 64 * 1024;
constexpr size_t kQueueMark = 256 * 1024;

}  // namespace

SsiSink::SsiSink(http::Exchange& ex, const config::SsiConfig& cfg, std::shared_ptr<MainState> main)
    : ex_(ex), cfg_(cfg), main_(std::move(main)), parser_(size_t(cfg.value_length)) {
  output_.render_stub = [this](const std::string& block) { return render_stub(block); };
}

void SsiSink::attach(std::shared_ptr<http::ResponseSink> filter_below, http::ResponseSink& below) {
  filter_below_ = std::move(filter_below);
  next_ = filter_below_ ? filter_below_.get() : &below;
}

void SsiSink::send_body(std::string_view data) {
  if (done_ || finish_wanted_ || data.empty()) return;
  input_.push_bytes(data);
  input_bytes_ += data.size();
  pump();
}

void SsiSink::send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) {
  if (done_ || finish_wanted_ || length <= 0) return;
  input_.push_file(std::move(file), offset, length);
  input_bytes_ += size_t(length);
  pump();
}

void SsiSink::finish() {
  if (done_ || finish_wanted_) return;
  finish_wanted_ = true;
  pump();
}

// The exchange aborts the codec's sink itself; the includes end with us.
void SsiSink::abort() {
  done_ = true;
  input_.clear();
  input_bytes_ = 0;
  if (filter_below_) filter_below_->abort();
}

void SsiSink::set_drain_callback(std::function<void()> cb) {
  if (input_bytes_ > 0 || !output_.empty()) {
    handler_drain_ = std::move(cb);  // handed on once what is held here went out
    return;
  }
  next_->set_drain_callback(std::move(cb));
}

void SsiSink::schedule_pump() {
  if (pump_scheduled_) return;
  pump_scheduled_ = true;
  ex_.services().loop->defer([self = weak_from_this()] {
    if (auto s = self.lock()) {
      s->pump_scheduled_ = false;
      s->pump();
    }
  });
}

void SsiSink::wait_for_sink() {
  if (sink_wait_) return;
  sink_wait_ = true;
  next_->set_drain_callback([self = weak_from_this()] {
    if (auto s = self.lock()) {
      s->sink_wait_ = false;
      s->pump();
    }
  });
}

// Runs the stream as far as it can go now. Calls that arrive while it runs
// (an include that ended at once) make it go round again.
void SsiSink::pump() {
  if (pumping_) {
    pump_again_ = true;
    return;
  }
  pumping_ = true;
  do {
    pump_again_ = false;
    step();
  } while (pump_again_ && !done_);
  pumping_ = false;
}

void SsiSink::step() {
  if (done_) return;
  if (waiting_ && waiting_->done()) include_done();
  // Output first, then one slice of input, while the sink below has room.
  for (;;) {
    switch (output_.flush(*next_, kQueueMark, ex_)) {
      case OrderedOutput::Flush::failed:
        TORII_LOG_EX(ex_, crit, "pread() failed in the SSI filter (%s)%s", strerror(errno), http::log_context(ex_).c_str());
        done_ = true;
        ex_.abort();
        return;
      case OrderedOutput::Flush::sink_full:
        wait_for_sink();
        return;
      case OrderedOutput::Flush::waiting:  // the include's next change pumps again
      case OrderedOutput::Flush::all_out:
        break;
    }
    if (done_ || input_.empty() || waiting_) break;
    if (next_->queued_bytes() >= kQueueMark) {
      wait_for_sink();
      return;
    }
    if (!parse_slice()) return;
  }
  if (done_ || input_bytes_ > 0 || waiting_ || !output_.empty()) return;
  if (finish_wanted_) {
    if (!parser_finished_) {
      parser_finished_ = true;
      std::string rest;
      if (parser_.finish(rest))
        TORII_LOG_EX(ex_, info, "unfinished SSI command at the end of the body%s", http::log_context(ex_).c_str());
      text(rest);
      pump_again_ = true;
      return;
    }
    end();
    return;
  }
  if (handler_drain_) {
    next_->set_drain_callback(std::move(handler_drain_));
    handler_drain_ = nullptr;
  }
}

bool SsiSink::parse_slice() {
  std::string_view slice;
  if (!input_.front_slice(kSlice, slice)) {
    TORII_LOG_EX(ex_, crit, "pread() failed in the SSI filter (%s)%s", strerror(errno), http::log_context(ex_).c_str());
    done_ = true;
    input_.clear();
    ex_.abort();
    return false;
  }
  const size_t n = parse(slice);
  input_.consume(n);
  input_bytes_ -= std::min(input_bytes_, n);
  return true;
}

// Parses `data` up to its end, or up to a command that must wait for an
// include; returns how much of it was read.
size_t SsiSink::parse(std::string_view data) {
  std::string_view in = data;
  std::string plain;
  while (!in.empty() && !done_) {
    plain.clear();
    const auto event = parser_.feed(in, plain);
    text(plain);
    if (event == Parser::Event::more) break;
    if (event == Parser::Event::error) {
      TORII_LOG_EX(ex_, error, "%s%s", parser_.error().c_str(), http::log_context(ex_).c_str());
      error_message();
      continue;
    }
    run(parser_.command());
    if (waiting_) break;
  }
  return data.size() - in.size();
}

void SsiSink::end() {
  done_ = true;
  if (filter_below_) {
    filter_below_->finish();  // it ends the response once its own output is out
  } else {
    ex_.finish_filtered();
  }
}

bool rewrites_body(const config::LocationSettings& s, std::string_view content_type) {
  if (!s.ssi) return false;
  const config::SsiConfig& c = *s.ssi;
  if (c.on && c.types.matches(content_type)) return true;
  return (!c.before_body.empty() || !c.after_body.empty()) && c.addition_types.matches(content_type);
}

std::shared_ptr<SsiSink> header_filter(http::Exchange& ex, http::ResponseHead& head) {
  const config::SsiConfig& cfg = *ex.settings().ssi;
  if (!cfg.on || head.content_length == 0 || head.status == 101) return nullptr;
  const std::string* type = head.find("Content-Type");
  if (!type || !cfg.types.matches(*type)) return nullptr;
  if (ex.subrequest_depth == 0) {
    head.content_length = -1;
    head.remove("Content-Length");
    head.remove("Accept-Ranges");
    if (!cfg.last_modified) {
      head.remove("Last-Modified");
      head.remove("ETag");
    } else {
      http::weaken_etag(head);
    }
  }
  if (ex.header_only) return nullptr;
  if (!ex.ssi_state) ex.ssi_state = std::make_shared<MainState>();
  return std::make_shared<SsiSink>(ex, cfg, ex.ssi_state);
}

std::shared_ptr<http::ResponseSink> attach(std::shared_ptr<SsiSink> ssi, std::shared_ptr<http::ResponseSink> filter_below,
                                           http::ResponseSink& below) {
  ssi->attach(std::move(filter_below), below);
  return ssi;
}

}  // namespace torii::ssi
