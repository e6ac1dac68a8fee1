#include "modules/flv/flv_handler.h"

#include <cstdint>
#include <string_view>

#include "handlers/file_cut_response.h"
#include "http/exchange.h"
#include "http/query_arg.h"

namespace torii::flv {

namespace {

// "FLV", version 1, audio and video present, a 9-byte header, then the
// first PreviousTagSize (0).
constexpr char kHeader[] = "FLV\x1\x5\0\0\0\x9\0\0\0\0";
constexpr size_t kHeaderSize = sizeof kHeader - 1;
static_assert(kHeaderSize == 13);

}  // namespace

int64_t parse_offset(std::string_view value) {
  if (value.empty()) return -1;
  int64_t n = 0;
  for (const char c : value) {
    if (c < '0' || c > '9') return -1;
    if (n > (INT64_MAX - (c - '0')) / 10) return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

handlers::HandlerResult serve(http::Exchange& ex) {
  std::shared_ptr<const http::OpenFile> file;
  if (auto answered = handlers::open_cut_source(ex, file)) return std::move(*answered);

  const int64_t size = file->size;
  int64_t start = 0;
  if (ex.req.has_query) {
    if (auto v = http::query_arg(ex.req.query, "start")) {
      start = parse_offset(*v);
      if (start < 0 || start >= size) start = 0;
    }
  }
  handlers::FileCut cut;
  cut.file = std::move(file);
  cut.offset = start;
  cut.length = size - start;
  if (start > 0) {
    cut.prefix.assign(kHeader, kHeaderSize);
    // nginx's range filter cannot cut several ranges from two buffers; the
    // whole body answers them here.
    cut.single_range = true;
  }
  return handlers::send_file_cut(ex, std::move(cut));
}

}  // namespace torii::flv
