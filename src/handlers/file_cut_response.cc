#include "handlers/file_cut_response.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "http/date.h"
#include "http/document_root.h"
#include "http/etag.h"
#include "http/exchange.h"
#include "http/range.h"
#include "http/range_response.h"

namespace torii::handlers {

namespace {

// Bytes [from, to) of the body: the part of the prefix, then of the file.
void send_span(http::Exchange& ex, const FileCut& cut, int64_t from, int64_t to) {
  const int64_t prefix = int64_t(cut.prefix.size());
  if (from < prefix) {
    const int64_t end = std::min(to, prefix);
    ex.send_body(std::string_view(cut.prefix).substr(size_t(from), size_t(end - from)));
  }
  const int64_t file_from = std::max(from, prefix) - prefix;
  const int64_t file_to = to - prefix;
  if (file_to > file_from) ex.send_file(cut.file, cut.offset + file_from, file_to - file_from);
}

}  // namespace

std::optional<HandlerResult> open_cut_source(http::Exchange& ex, std::shared_ptr<const http::OpenFile>& file) {
  if (ex.req.method != http::Method::get && ex.req.method != http::Method::head) return HandlerResult::error(405);
  if (auto decided = apply_try_files(ex)) return decided;
  const std::string& uri = ex.req.path;
  if (uri.empty() || uri.back() == '/') return serve_static(ex);  // index, autoindex
  if (!http::map_uri_to_path(ex, uri, ex.request_filename)) return HandlerResult::error(404);
  OpenResult opened = open_request_file(ex, ex.request_filename);
  if (!opened.ok()) return open_failure(ex, ex.request_filename, opened.err);
  if (opened.file->is_dir) return serve_static(ex);  // its redirect to "dir/"
  file = std::move(opened.file);
  return std::nullopt;
}

HandlerResult send_file_cut(http::Exchange& ex, FileCut cut) {
  const config::LocationSettings& s = ex.settings();
  const http::OpenFile& f = *cut.file;
  const int64_t total = int64_t(cut.prefix.size()) + cut.length;

  char etag_buf[http::kMaxEtagLen];
  const size_t etag_len = s.etag ? http::format_etag(f.mtime, total, etag_buf) : 0;
  const std::string_view etag(etag_buf, etag_len);
  const std::string_view date = http::cached_mtime_date(f.mtime);
  // An error_page that landed here keeps the error's status; no
  // conditionals or ranges then, as for static files.
  const int err_status = ex.status_override > 0 ? ex.status_override : 0;

  if (err_status == 0)
    if (auto answered = answer_preconditions(ex, f, etag, date)) return *answered;

  http::ResponseHead head;

  const std::string_view type = config::mime_type(s, ex.req.path);
  head.status = err_status != 0 ? err_status : 200;
  if (!type.empty()) head.add("Content-Type", std::string(type));
  head.add("Last-Modified", std::string(date));
  if (!etag.empty()) head.add("ETag", std::string(etag));
  const uint32_t max_ranges = s.core.max_ranges;
  head.content_length = total;
  if (ex.req.method == http::Method::head) ex.header_only = true;

  const http::Header* range = ex.req.method == http::Method::get && err_status == 0 && max_ranges > 0
                                  ? ex.req.find(http::HeaderToken::range)
                                  : nullptr;
  if (range != nullptr && if_range_allows(ex, f, etag)) {
    std::vector<http::ByteRange> ranges;
    const size_t limit = cut.single_range ? 1 : http::range_limit(max_ranges);
    switch (http::parse_range(range->value, total, ranges, limit)) {
      case http::RangeOutcome::ignore:
        break;
      case http::RangeOutcome::unsatisfiable:
        ex.response.add("Content-Range", "bytes */" + std::to_string(total));
        return HandlerResult::error(416);
      case http::RangeOutcome::ok:
        if (ranges.size() > 1) {
          if (!cut.prefix.empty()) break;  // not reached: prefixed bodies take one range
          http::send_multipart(ex, std::move(head), cut.file, cut.offset, total, type, ranges);
          return HandlerResult::done();
        }
        head.status = 206;
        head.add("Content-Range", http::content_range(ranges[0], total));
        head.content_length = ranges[0].length();
        ex.send_head(std::move(head));
        send_span(ex, cut, ranges[0].start, ranges[0].end);
        ex.finish();
        return HandlerResult::done();
    }
  }

  // As nginx's range filter: Accept-Ranges on a whole body only.
  if (err_status == 0 && max_ranges > 0) head.add("Accept-Ranges", "bytes");
  ex.send_head(std::move(head));
  if (!ex.header_only) send_span(ex, cut, 0, total);
  ex.finish();
  return HandlerResult::done();
}

}  // namespace torii::handlers
