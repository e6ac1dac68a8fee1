#include "http/rewriting_sink.h"

#include <cerrno>
#include <cstring>

#include "http/exchange.h"
#include "http/log_context.h"
#include "log/error_log.h"

namespace torii::http {

namespace {

constexpr size_t kSlice = 64 * 1024;
constexpr size_t kQueueMark = 256 * 1024;

}  // namespace

void RewritingSink::attach(std::shared_ptr<ResponseSink> filter_below, ResponseSink& below) {
  filter_below_ = std::move(filter_below);
  next_ = filter_below_ ? filter_below_.get() : &below;
}

void RewritingSink::send_body(std::string_view data) {
  if (done_ || finish_wanted_) return;
  if (!pending_.empty()) {
    pending_.push_bytes(data);  // behind a file still read
    return;
  }
  pass(data);
}

void RewritingSink::send_file(std::shared_ptr<const OpenFile> file, int64_t offset, int64_t length) {
  if (done_ || finish_wanted_) return;
  pending_.push_file(std::move(file), offset, length);
  pump();
}

void RewritingSink::finish() {
  if (done_ || finish_wanted_) return;
  finish_wanted_ = true;
  pump();
}

void RewritingSink::abort() {
  done_ = true;
  pending_.clear();
  if (filter_below_) filter_below_->abort();
}

void RewritingSink::set_trailers(std::vector<std::pair<std::string, std::string>> trailers) {
  next_->set_trailers(std::move(trailers));
}

size_t RewritingSink::queued_bytes() const { return next_->queued_bytes(); }

void RewritingSink::set_drain_callback(std::function<void()> cb) {
  if (!pending_.empty()) {
    handler_drain_ = std::move(cb);  // handed on once the files queued here are read
    return;
  }
  next_->set_drain_callback(std::move(cb));
}

void RewritingSink::pass(std::string_view data) {
  out_.clear();
  rewrite(data, out_);
  if (!out_.empty()) next_->send_body(out_);
}

void RewritingSink::pump() {
  while (!pending_.empty() && !done_) {
    if (next_->queued_bytes() >= kQueueMark) {
      std::weak_ptr<RewritingSink> self = weak_from_this();
      next_->set_drain_callback([self] {
        if (auto s = self.lock()) s->pump();
      });
      return;
    }
    std::string_view slice;
    if (!pending_.front_slice(kSlice, slice)) {
      TORII_LOG_EX(ex_, crit, "pread() failed in %s (%s)%s", filter_name_, strerror(errno), log_context(ex_).c_str());
      done_ = true;
      pending_.clear();
      ex_.abort();
      return;
    }
    const size_t n = slice.size();
    pass(slice);
    pending_.consume(n);
  }
  if (done_) return;
  if (finish_wanted_) {
    out_.clear();
    rewrite_end(out_);
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

}  // namespace torii::http
