#include "cache/ranges.h"

#include <algorithm>
#include <vector>

#include "http/exchange.h"
#include "http/range_response.h"
#include "modules/compression/compression_filter.h"

namespace torii::cache {

const http::Header* applicable_range(const http::Exchange& ex, const http::ResponseHead& head) {
  const http::Header* range = ex.req.find(http::HeaderToken::range);
  if (!range || head.status != 200 || !head.find("Accept-Ranges")) return nullptr;
  if (ex.settings().core.max_ranges == 0) return nullptr;  // max_ranges 0: ranges off
  // gzip (or gunzip) will code the body: nginx's gzip filter turns ranges off.
  if (compression::changes_body(ex, head)) return nullptr;
  const http::Header* if_range = ex.req.find(http::HeaderToken::if_range);
  if (!if_range) return range;
  const std::string* etag = head.find("ETag");
  const std::string* lm = head.find("Last-Modified");
  const bool holds = (etag && if_range->value == *etag) || (lm && if_range->value == *lm);
  return holds ? range : nullptr;
}

StreamedRange::Outcome StreamedRange::start(http::Exchange& ex, http::ResponseHead& head) {
  if (head.content_length < 0 || ex.header_only) return Outcome::whole;
  const http::Header* range = applicable_range(ex, head);
  if (!range) return Outcome::whole;
  std::vector<http::ByteRange> ranges;
  switch (http::parse_range(range->value, head.content_length, ranges,
                            http::range_limit(ex.settings().core.max_ranges))) {
    case http::RangeOutcome::ignore:
      return Outcome::whole;
    case http::RangeOutcome::unsatisfiable:
      ex.response.add("Content-Range", "bytes */" + std::to_string(head.content_length));
      return Outcome::unsatisfiable;
    case http::RangeOutcome::ok:
      break;
  }
  if (ranges.size() != 1) return Outcome::whole;
  range_ = ranges[0];
  active_ = true;
  head.status = 206;
  head.add("Content-Range", http::content_range(range_, head.content_length));
  head.content_length = range_.length();
  return Outcome::part;
}

std::string_view StreamedRange::cut(std::string_view data) {
  if (!active_) return data;
  const int64_t from = at_, to = at_ + int64_t(data.size());
  at_ = to;
  const int64_t start = std::max(from, range_.start), end = std::min(to, range_.end);
  if (start >= end) return {};
  return data.substr(size_t(start - from), size_t(end - start));
}

}  // namespace torii::cache
