#include "modules/ssi/ordered_output.h"

#include "core/event_loop.h"

namespace torii::ssi {

namespace {

constexpr size_t kSlice = 64 * 1024;

}  // namespace

void OrderedOutput::push_text(std::string_view text) {
  if (text.empty()) return;
  if (!parts_.empty() && !parts_.back().include && !parts_.back().file) {
    parts_.back().text.append(text);
    return;
  }
  Part p;
  p.text = text;
  parts_.push_back(std::move(p));
}

void OrderedOutput::push_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) {
  Part p;
  p.file = std::move(file);
  p.offset = offset;
  p.length = length;
  parts_.push_back(std::move(p));
}

void OrderedOutput::push_include(std::shared_ptr<Subrequest> include, std::optional<std::string> stub) {
  Part p;
  p.include = std::move(include);
  p.stub = std::move(stub);
  parts_.push_back(std::move(p));
}

OrderedOutput::Flush OrderedOutput::flush(http::ResponseSink& next, size_t mark, http::Exchange& ex) {
  while (!parts_.empty()) {
    Part& part = parts_.front();
    if (part.file) {
      next.send_file(std::move(part.file), part.offset, part.length);
      parts_.pop_front();
      continue;
    }
    if (!part.include) {
      next.send_body(part.text);
      parts_.pop_front();
      continue;
    }
    Subrequest& sub = *part.include;
    if (part.stub) {
      if (!sub.done()) return Flush::waiting;
      if (sub.status() >= 300 || sub.body_size() == 0) {
        sub.clear_body();
        std::string stub = std::move(*part.stub);
        part.stub.reset();
        if (render_stub) stub = render_stub(stub);
        if (!stub.empty()) next.send_body(stub);
      }
      part.stub.reset();
    }
    while (!sub.body().empty()) {
      if (next.queued_bytes() >= mark) return Flush::sink_full;
      std::string_view slice;
      if (!sub.body().front_slice(kSlice, slice)) return Flush::failed;
      const size_t n = slice.size();
      next.send_body(slice);
      sub.body().consume(n);
    }
    if (!sub.done()) return Flush::waiting;
    // The child exchange may still be on the stack of the call that ended
    // it: it goes at the end of the turn.
    ex.services().loop->defer([done = std::move(part.include)] {});
    parts_.pop_front();
  }
  return Flush::all_out;
}

}  // namespace torii::ssi
