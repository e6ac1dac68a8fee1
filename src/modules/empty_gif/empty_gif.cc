#include "modules/empty_gif/empty_gif.h"

#include <string_view>

#include "http/date.h"
#include "http/exchange.h"
#include "http/pipeline.h"

namespace torii::empty_gif {

namespace {

// GIF89a, 1x1, a two-colour table, colour #1 transparent, one LZW block
// that paints pixel 0 with colour #1.
constexpr unsigned char kGif[] = {
    'G', 'I', 'F', '8', '9', 'a',        // header
    0x01, 0x00, 0x01, 0x00,              // width 1, height 1
    0x80, 0x01, 0x00,                    // global 1-bit table, background #1, no aspect ratio
    0x00, 0x00, 0x00, 0xff, 0xff, 0xff,  // #0 black, #1 white
    0x21, 0xf9, 0x04, 0x01, 0x00, 0x00,  // graphic control: transparent colour given, no delay
    0x01, 0x00,                          // transparent colour #1, end of block
    0x2c, 0x00, 0x00, 0x00, 0x00,        // image at 0,0
    0x01, 0x00, 0x01, 0x00, 0x00,        // 1x1, no local table
    0x02, 0x02, 0x4c, 0x01, 0x00,        // LZW min code size 2; 2 bytes: clear, 1, end
    0x3b,                                // trailer
};
static_assert(sizeof(kGif) == 43);

// The Last-Modified nginx gives it: Mon, 28 Sep 1970 06:00:00 GMT.
constexpr int64_t kLastModified = 23349600;

}  // namespace

void serve(http::Exchange& ex) {
  if (ex.req.method != http::Method::get && ex.req.method != http::Method::head) {
    http::send_error(ex, 405);
    return;
  }
  // nginx's not-modified filter: If-Unmodified-Since first (412), then
  // If-Modified-Since with "if_modified_since exact" (the same second).
  if (const http::Header* h = ex.req.find(http::HeaderToken::if_unmodified_since)) {
    auto t = http::parse_http_date(h->value);
    if (!t || *t < kLastModified) {
      http::send_error(ex, 412);
      return;
    }
  } else if (const http::Header* h = ex.req.find(http::HeaderToken::if_modified_since)) {
    auto t = http::parse_http_date(h->value);
    if (t && *t == kLastModified) {
      http::ResponseHead head;
      head.status = 304;
      head.add("Last-Modified", http::format_http_date(kLastModified));
      ex.send_head(std::move(head));
      ex.finish();
      return;
    }
  }
  http::ResponseHead head;
  head.status = 200;
  head.add("Content-Type", "image/gif");
  head.add("Last-Modified", http::format_http_date(kLastModified));
  head.content_length = sizeof(kGif);
  ex.send_head(std::move(head));
  ex.send_body(std::string_view(reinterpret_cast<const char*>(kGif), sizeof(kGif)));
  ex.finish();
}

}  // namespace torii::empty_gif
