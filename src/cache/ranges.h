// Range requests against a cached response, as nginx's range filter sees
// them: a stored response takes ranges only when the upstream said it does
// (its Accept-Ranges), and If-Range must name its ETag or Last-Modified.
// A hit serves one range or several (multipart/byteranges); a miss being
// stored serves one range cut out of the body as it streams (several get
// the whole response: nginx's single_range), while the whole body is
// stored.
#pragma once

#include <cstdint>
#include <string_view>

#include "http/range.h"

namespace torii::http {
class Exchange;
struct ResponseHead;
struct Header;
}  // namespace torii::http

namespace torii::cache {

// The request's Range header when it applies to `head` (a 200 the cache
// holds or is storing), else null.
const http::Header* applicable_range(const http::Exchange& ex, const http::ResponseHead& head);

// One range of a response body that streams past.
class StreamedRange {
 public:
  enum class Outcome { whole, part, unsatisfiable };
  // Decides from the request and `head` (a 200 whose length is known);
  // `part` turns `head` into the 206 of that range; `unsatisfiable`: the
  // exchange's response has the 416's Content-Range.
  Outcome start(http::Exchange& ex, http::ResponseHead& head);
  // Of the next body bytes, those inside the range (all of them when
  // there is no range).
  std::string_view cut(std::string_view data);

 private:
  bool active_ = false;
  http::ByteRange range_;
  int64_t at_ = 0;  // body bytes seen so far
};

}  // namespace torii::cache
