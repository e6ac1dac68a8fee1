// The empty_gif module (nginx's ngx_http_empty_gif_module): a location
// that answers GET and HEAD with a transparent 1x1 GIF (43 bytes), with
// nginx's fixed Last-Modified and its conditional checks; 405 otherwise.
#pragma once

namespace torii::http {
class Exchange;
}

namespace torii::empty_gif {

void serve(http::Exchange& ex);

}  // namespace torii::empty_gif
