// The compression filter: a header filter that decides, from the response
// head, the location's settings and the request, whether and how the body
// is encoded, and a body filter that sits between the handler and the
// codec's ResponseSink and encodes the body as it passes.
//
// The rules are nginx's gzip module's (ngx_http_gzip_filter_module and
// ngx_http_gzip_ok): only 200, 403 and 404; not a response that already
// has a Content-Encoding; not below gzip_min_length when the length is
// known; a listed MIME type; then, per request: Accept-Encoding (q-values
// honoured), gzip_http_version, gzip_proxied when the request has Via,
// gzip_disable. Encoding removes Content-Length (chunked on HTTP/1.1) and
// Accept-Ranges, and weakens a strong ETag. A HEAD gets the same head as
// a GET would.
//
// brotli and zstd follow the same rules with their own *_types, *_min_length
// and levels. Among the codings the client accepts with the same q-value
// the server prefers zstd, then br, then gzip: zstd compresses about as
// well as br at a fraction of its CPU, and both beat gzip.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "http/response.h"

namespace torii::http {
class Exchange;
}

namespace torii::compression {

// Runs the header filter on `head` (which it may change). Returns the body
// filter to put in front of `next`, or null when the body passes as it is.
std::shared_ptr<http::ResponseSink> header_filter(http::Exchange& ex, http::ResponseHead& head,
                                                  http::ResponseSink& next);

// Whether header_filter would encode or decode the body of a response with
// `head`, which then loses its length and ranges. A handler that answers
// ranges itself asks first: in nginx the gzip (and gunzip) filter clears
// Accept-Ranges, so the range filter after it sends the whole 200.
bool changes_body(const http::Exchange& ex, const http::ResponseHead& head);

// gzip_static, brotli_static, zstd_static: the precompressed file beside
// `path` (path.gz, .br, .zst) to serve instead, in the order of the
// client's q-values and then the server's (zstd, br, gzip); `always` serves
// it whatever the request says. `open` opens a regular file or returns
// null. No file: `file` is null and the original is served. `vary` is set
// when the response must carry Vary: Accept-Encoding (gzip_vary).
struct Precompressed {
  std::shared_ptr<const http::OpenFile> file;
  std::string_view coding;  // the Content-Encoding
};
using OpenFn = std::function<std::shared_ptr<const http::OpenFile>(const std::string&)>;
Precompressed open_precompressed(http::Exchange& ex, const std::string& path, const OpenFn& open, bool& vary);

// $gzip_ratio: "in/out" with two decimals, once the body was compressed.
bool append_gzip_ratio(const http::Exchange& ex, std::string& out);

}  // namespace torii::compression
