#include "modules/mp4/mp4_handler.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "handlers/file_cut_response.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/query_arg.h"
#include "log/error_log.h"
#include "modules/mp4/trimmer.h"

namespace torii::mp4 {

namespace {

ReadAt file_reader(const http::OpenFile& f) {
  return [&f](int64_t offset, size_t n, uint8_t* out) {
    if (f.has_content()) {
      if (offset < 0 || uint64_t(offset) + n > f.content.size()) return false;
      std::memcpy(out, f.content.data() + offset, n);
      return true;
    }
    return http::read_exact(f.fd, reinterpret_cast<char*>(out), n, offset);
  };
}

// mp4_limit_rate (NGINX Plus): the body leaves at the movie's average
// bitrate times the factor, once mp4_limit_rate_after of playback time
// has gone unpaced.
void apply_limit_rate(http::Exchange& ex, int64_t body_bytes, uint64_t duration_ms) {
  const config::Mp4Settings& s = ex.settings().mp4;
  if (s.limit_rate_permille <= 0 || duration_ms == 0 || body_bytes <= 0) return;
  const int64_t bitrate = int64_t(uint64_t(body_bytes) * 1000 / duration_ms);  // bytes a second
  ex.access.limit_rate = std::max<int64_t>(1, bitrate * s.limit_rate_permille / 1000);
  ex.access.limit_rate_after = bitrate * s.limit_rate_after_ms / 1000;
}

}  // namespace

int64_t parse_seconds_ms(std::string_view value) {
  if (value.empty()) return -1;
  constexpr int64_t kCutoff = INT64_MAX / 10;
  constexpr int64_t kCutlim = INT64_MAX % 10;
  int64_t v = 0;
  int point = 3;
  bool dot = false;
  for (const char c : value) {
    if (c == '.') {
      if (dot) return -1;
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') return -1;
    if (point == 0) continue;
    if (v >= kCutoff && (v > kCutoff || c - '0' > kCutlim)) return -1;
    v = v * 10 + (c - '0');
    point -= dot ? 1 : 0;
  }
  while (point-- > 0) {
    if (v > kCutoff) return -1;
    v *= 10;
  }
  return v;
}

handlers::HandlerResult serve(http::Exchange& ex) {
  std::shared_ptr<const http::OpenFile> file;
  if (auto answered = handlers::open_cut_source(ex, file)) return std::move(*answered);

  int64_t start = -1;
  int64_t length = 0;
  if (ex.req.has_query) {
    if (auto v = http::query_arg(ex.req.query, "start")) start = parse_seconds_ms(*v);
    if (auto v = http::query_arg(ex.req.query, "end")) {
      const int64_t end = parse_seconds_ms(*v);
      if (end > 0) {
        if (start < 0) start = 0;
        if (end > start) length = end - start;
      }
    }
  }

  handlers::FileCut cut;
  cut.file = file;
  cut.offset = 0;
  cut.length = file->size;
  const ReadAt read_at = file_reader(*file);
  uint64_t duration_ms = 0;
  if (start >= 0) {
    cut.single_range = true;  // nginx's r->single_range, even for the whole file
    const config::Mp4Settings& s = ex.settings().mp4;
    CutRequest req;
    req.start_ms = uint64_t(start);
    req.length_ms = uint64_t(length);
    req.start_key_frame = s.start_key_frame;
    req.buffer_size = uint64_t(s.buffer_size);
    req.max_buffer_size = uint64_t(s.max_buffer_size);
    CutResult r = cut_movie(read_at, file->size, ex.request_filename, req);
    switch (r.kind) {
      case CutResult::Kind::refused:
        TORII_LOG_EX(ex, error, "%s%s", r.error.c_str(), http::log_context(ex).c_str());
        return handlers::HandlerResult::error(500);
      case CutResult::Kind::cut:
        cut.prefix = std::move(r.head);
        cut.offset = r.data_offset;
        cut.length = r.data_length;
        duration_ms = r.duration_ms;
        break;
      case CutResult::Kind::whole_file:
        break;
    }
  }
  if (ex.settings().mp4.limit_rate_permille > 0) {
    if (duration_ms == 0) duration_ms = movie_duration_ms(read_at, file->size);
    apply_limit_rate(ex, int64_t(cut.prefix.size()) + cut.length, duration_ms);
  }
  return handlers::send_file_cut(ex, std::move(cut));
}

}  // namespace torii::mp4
