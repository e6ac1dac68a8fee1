// The image filter (nginx's ngx_http_image_filter_module): in a location
// with `image_filter`, a response is held whole (up to
// image_filter_buffer), then its JPEG, GIF, PNG or WebP image is resized,
// cropped or rotated (transform.h), its size answered as JSON, or its
// being an image checked; anything that is not an image of those formats
// is answered 415, as nginx. The head waits with the body: its type and
// length change. The filter sits after the headers filters (add_header,
// expires, userid) and before charset, SSI and compression, as in nginx.
#pragma once

namespace torii::http {
class Exchange;
struct ResponseHead;
}

namespace torii::image_filter {

// send_head's hook: true when the filter took the head (and became the
// exchange's body filter); it passes a head on once the body is in.
bool hold_head(http::Exchange& ex, http::ResponseHead& head);

// Whether this location's responses go through the filter (the static
// handler then offers no ranges: the filter needs the whole image).
bool active(const http::Exchange& ex);

}  // namespace torii::image_filter
