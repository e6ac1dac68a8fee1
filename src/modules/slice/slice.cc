#include "modules/slice/slice.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/event_loop.h"
#include "http/exchange.h"
#include "http/date.h"
#include "http/log_context.h"
#include "http/pipeline.h"
#include "http/preconditions.h"
#include "http/sub_exchange.h"
#include "http/range.h"
#include "http/range_response.h"
#include "log/error_log.h"

namespace torii::slice {

namespace {

// Where the first part starts: the part holding the client's range start
// (nginx's: a single "bytes=N-..." without If-Range; else 0).
int64_t first_start(const http::Exchange& ex, int64_t size) {
  if (ex.req.find(http::HeaderToken::if_range)) return 0;
  const http::Header* range = ex.req.find(http::HeaderToken::range);
  if (!range) return 0;
  std::string_view v = range->value;
  if (v.size() < 7 || v.find(',') != std::string_view::npos) return 0;
  for (size_t i = 0; i < 6; ++i)
    if (std::tolower(static_cast<unsigned char>(v[i])) != "bytes="[i]) return 0;
  v.remove_prefix(6);
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  int64_t start = 0;
  for (char c : v) {
    if (c < '0' || c > '9') break;
    if (start > (INT64_MAX - 9) / 10) return 0;
    start = start * 10 + (c - '0');
  }
  return size * (start / size);
}

std::string range_value(int64_t start, int64_t size) {
  return "bytes=" + std::to_string(start) + "-" + std::to_string(start + size - 1);
}

// "bytes START-END/TOTAL" (spaces allowed around the parts, as nginx);
// `end` one past the last byte. False for anything else, "*" included.
bool parse_content_range(std::string_view v, int64_t& start, int64_t& end, int64_t& total) {
  if (v.substr(0, 6) != "bytes ") return false;
  v.remove_prefix(6);
  auto skip = [&] {
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  };
  auto number = [&](int64_t& out) {
    skip();
    if (v.empty() || v.front() < '0' || v.front() > '9') return false;
    out = 0;
    while (!v.empty() && v.front() >= '0' && v.front() <= '9') {
      if (out > (INT64_MAX - 9) / 10) return false;
      out = out * 10 + (v.front() - '0');
      v.remove_prefix(1);
    }
    skip();
    return true;
  };
  auto expect = [&](char c) {
    if (v.empty() || v.front() != c) return false;
    v.remove_prefix(1);
    return true;
  };
  if (!number(start) || !expect('-') || !number(end) || !expect('/') || !number(total) || !v.empty()) return false;
  ++end;
  return start < end && end <= total;
}

void remove_field(http::ResponseHead& head, std::string_view name) {
  std::erase_if(head.headers, [&](const auto& h) {
    return h.first.size() == name.size() &&
           std::equal(h.first.begin(), h.first.end(), name.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
           });
  });
}

class Slicer;

// One part: an exchange of its own over the client's request, whose
// response comes back here.
struct Part final : http::ResponseSink {
  Part(Slicer& s, http::Exchange& main, int64_t start);

  void send_head(const http::ResponseHead& head) override;
  void send_body(std::string_view data) override;
  void send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) override;
  void finish() override;
  void abort() override;
  size_t queued_bytes() const override;
  void set_drain_callback(std::function<void()> cb) override;

  void end(bool aborted);

  Slicer& slicer;
  http::Exchange& main;
  int64_t start;
  int64_t seen = 0;     // body bytes of this part so far
  bool wanted = false;  // its head was taken: its body goes on
  bool done = false;
  std::shared_ptr<char> alive = std::make_shared<char>(0);
  http::Exchange ex;  // last: it refers to the members above
};

class Slicer final : public http::Exchange::HandlerState {
 public:
  explicit Slicer(http::Exchange& main) : main_(main), size_(main.settings().slice_size) {}

  void start_part(int64_t start) {
    part_ = std::make_unique<Part>(*this, main_, start);
    Part* const part = part_.get();
    main_.slice_range = part->ex.slice_range;
    http::resume_request(part->ex, http::Phase::content);
    // A part the cache keeps is read to its end even when the client goes
    // away (the proxy's rule for a cacheable response, as nginx's), so the
    // client's exchange, which the part lives in, must outlast the client
    // too. Unless the part already ended and the next one decided.
    if (part_.get() == part) main_.ignore_client_abort = part->ex.ignore_client_abort;
  }

  void on_client_gone() override {
    if (part_) part_->ex.client_gone();
  }

  // The part's response head: true when its body is wanted.
  bool on_head(Part& p, const http::ResponseHead& head);
  void on_body(Part& p, std::string_view data);
  void on_file(Part& p, const std::shared_ptr<const http::OpenFile>& file, int64_t offset, int64_t length);
  void on_end(bool aborted);

 private:
  enum class Mode : uint8_t { first, passthrough, sliced, failed };
  bool fail(const char* why);
  void next();

  http::Exchange& main_;
  int64_t size_;
  Mode mode_ = Mode::first;
  std::unique_ptr<Part> part_;
  int64_t total_ = 0;                  // the whole representation's length
  int64_t window_start_ = 0, window_end_ = 0;  // what the client gets of it
  int64_t next_ = 0;                   // where the next part starts
  std::string etag_;
  bool has_etag_ = false;
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

Part::Part(Slicer& s, http::Exchange& m, int64_t at) : slicer(s), main(m), start(at), ex(*this, m.conn(), m.services()) {
  ex.req = m.req;  // views into the client's buffer: the client's exchange outlives its parts
  http::take_route_of(ex, m);
  ex.start = m.start;
  ex.header_only = m.header_only;
  ex.slice_part = true;
  ex.slice_range = range_value(at, m.settings().slice_size);
}

void Part::send_head(const http::ResponseHead& head) { wanted = slicer.on_head(*this, head); }
void Part::send_body(std::string_view data) {
  if (wanted) slicer.on_body(*this, data);
}
void Part::send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) {
  if (wanted) slicer.on_file(*this, file, offset, length);
}
void Part::finish() { end(false); }
void Part::abort() { end(true); }
void Part::end(bool aborted) {
  if (done) return;
  done = true;
  // Next at the end of the turn: never inside the handler's own call.
  main.services().loop->defer([s = &slicer, alive = std::weak_ptr<char>(alive), aborted] {
    if (!alive.expired()) s->on_end(aborted);
  });
}
size_t Part::queued_bytes() const { return main.queued_bytes(); }
void Part::set_drain_callback(std::function<void()> cb) {
  main.set_drain_callback([alive = std::weak_ptr<char>(alive), cb = std::move(cb)] {
    if (!alive.expired()) cb();
  });
}

bool Slicer::fail(const char* why) {
  TORII_LOG_EX(main_, error, "%s%s", why, http::log_context(main_).c_str());
  mode_ = Mode::failed;
  return false;
}

bool Slicer::on_head(Part& p, const http::ResponseHead& head) {
  if (mode_ == Mode::first) main_.upstream_cache_status = p.ex.upstream_cache_status;  // as nginx's main request
  if (mode_ == Mode::first && head.status != 206) {
    // Not sliced after all (the upstream ignored the Range): as it is.
    mode_ = Mode::passthrough;
    main_.send_head(head);
    return true;
  }
  if (head.status != 206) {
    TORII_LOG_EX(main_, error, "unexpected status code %d in slice response%s", head.status, http::log_context(main_).c_str());
    mode_ = Mode::failed;
    return false;
  }
  const std::string* etag = head.find("ETag");
  if (mode_ == Mode::sliced && has_etag_ && (!etag || *etag != etag_)) return fail("etag mismatch in slice response");
  const std::string* cr = head.find("Content-Range");
  int64_t start = 0, end = 0, total = 0;
  if (!cr || !parse_content_range(*cr, start, end, total)) return fail("invalid range in slice response");
  if (mode_ == Mode::sliced && total != total_) return fail("invalid range in slice response");
  const int64_t expected_end = std::min(p.start + size_, total);
  if (start != p.start || end != expected_end) {
    TORII_LOG_EX(main_, error, "unexpected range in slice response: %" PRId64 "-%" PRId64 ", expected: %" PRId64 "-%" PRId64 "%s",
              start, end, p.start, expected_end, http::log_context(main_).c_str());
    mode_ = Mode::failed;
    return false;
  }
  next_ = end;
  if (mode_ == Mode::sliced) return true;

  // The first part: the client's response is the whole representation,
  // or the one range it asked for (as nginx's range filter would cut it).
  mode_ = Mode::sliced;
  total_ = total;
  if (etag) {
    etag_ = *etag;
    has_etag_ = true;
  }
  http::ResponseHead out = head;
  remove_field(out, "Content-Range");
  remove_field(out, "Accept-Ranges");
  out.status = 200;
  out.content_length = total;
  window_start_ = 0;
  window_end_ = total;
  const std::string* lm = out.find("Last-Modified");
  // The whole response meets the client's preconditions when a cache keeps
  // its parts, as nginx's not-modified filter judges such a main request
  // (an uncached one passes as it is): a 412, or a 304 with no body.
  if (!p.ex.upstream_cache_status.empty()) {
    const auto modified = lm ? http::parse_http_date(*lm) : std::nullopt;
    const int pre = http::evaluate_preconditions(main_, etag ? std::string_view(*etag) : std::string_view(),
                                                 modified ? *modified : -1);
    if (pre == 412) {
      mode_ = Mode::failed;
      http::send_error(main_, 412);
      return false;
    }
    if (pre == 304) {
      out.status = 304;
      main_.send_head(std::move(out));  // header_only from here: the part ends, the response with it
      return false;
    }
  }
  const http::Header* range = main_.req.find(http::HeaderToken::range);
  const http::Header* if_range = main_.req.find(http::HeaderToken::if_range);
  if (range && if_range && !((etag && if_range->value == *etag) || (lm && if_range->value == *lm))) range = nullptr;
  std::vector<http::ByteRange> ranges;
  const auto outcome = range ? http::parse_range(range->value, total, ranges) : http::RangeOutcome::ignore;
  if (outcome == http::RangeOutcome::unsatisfiable) {
    main_.response.add("Content-Range", "bytes */" + std::to_string(total));
    mode_ = Mode::failed;
    http::send_error(main_, 416);
    return false;
  }
  if (outcome == http::RangeOutcome::ok && ranges.size() == 1) {
    window_start_ = ranges[0].start;
    window_end_ = ranges[0].end;
    out.status = 206;
    out.add("Content-Range", http::content_range(ranges[0], total));
    out.content_length = ranges[0].length();
    // A suffix range may start past this part: on from the part holding it.
    if (next_ <= window_start_) next_ = size_ * (window_start_ / size_);
  } else {
    out.add("Accept-Ranges", "bytes");
  }
  main_.send_head(std::move(out));
  return true;
}

void Slicer::on_body(Part& p, std::string_view data) {
  const int64_t at = p.start + p.seen;
  p.seen += int64_t(data.size());
  if (mode_ == Mode::passthrough) return main_.send_body(data);
  if (mode_ != Mode::sliced) return;
  const int64_t from = std::max(at, window_start_), to = std::min(at + int64_t(data.size()), window_end_);
  if (from < to) main_.send_body(data.substr(size_t(from - at), size_t(to - from)));
}

void Slicer::on_file(Part& p, const std::shared_ptr<const http::OpenFile>& file, int64_t offset, int64_t length) {
  const int64_t at = p.start + p.seen;
  p.seen += length;
  if (mode_ == Mode::passthrough) return main_.send_file(file, offset, length);
  if (mode_ != Mode::sliced) return;
  const int64_t from = std::max(at, window_start_), to = std::min(at + length, window_end_);
  if (from < to) main_.send_file(file, offset + (from - at), to - from);
}

void Slicer::on_end(bool aborted) {
  // The part's exchange goes at the end of this turn (its handler may
  // still be on the stack of the call that ended it).
  std::shared_ptr<Part> done(std::move(part_));
  main_.services().loop->defer([done] {});
  if (main_.finished()) return;
  if (mode_ == Mode::first && !aborted && !done->ex.head_sent()) {
    mode_ = Mode::failed;  // answered with nothing (return 444)
  }
  if (aborted || mode_ == Mode::failed) {
    if (main_.head_sent()) {
      main_.abort();
    } else {
      if (mode_ != Mode::failed) TORII_LOG_EX(main_, error, "missing slice response%s", http::log_context(main_).c_str());
      http::send_error(main_, 500);
    }
    return;
  }
  if (mode_ == Mode::passthrough || main_.header_only || next_ >= window_end_) {
    main_.finish();
    return;
  }
  start_part(next_);
}

}  // namespace

void serve(http::Exchange& ex) {
  auto slicer = std::make_unique<Slicer>(ex);
  Slicer& s = *slicer;
  if (ex.handler_state) {
    std::shared_ptr<http::Exchange::HandlerState> old = std::move(ex.handler_state);
    ex.services().loop->defer([old] {});
  }
  ex.handler_state = std::move(slicer);
  s.start_part(first_start(ex, ex.settings().slice_size));
}

}  // namespace torii::slice
