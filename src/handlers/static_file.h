// Serves files from root/alias: index, try_files, MIME type, conditional
// requests (If-Modified-Since, If-None-Match, If-Range), byte ranges (single
// and multipart/byteranges), HEAD, and never a path outside root or alias.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "handlers/open_file_cache.h"

namespace torii::http {
class Exchange;
struct OpenFile;
}

namespace torii::handlers {

// What the pipeline should do after a handler ran.
struct HandlerResult {
  enum class Kind {
    responded,          // the response was sent (head and body, finish() called)
    status,             // send the error response for `status` (error_page applies)
    internal_redirect,  // restart location matching with `uri` (index, try_files)
  };
  Kind kind = Kind::responded;
  int status = 0;
  std::string uri;  // for internal_redirect; may carry "?args"

  static HandlerResult done() { return {}; }
  static HandlerResult error(int code) { return {Kind::status, code, {}}; }
  static HandlerResult redirect(std::string u) { return {Kind::internal_redirect, 0, std::move(u)}; }
};

HandlerResult serve_static(http::Exchange& ex);

// try_files ahead of another content handler (fastcgi_pass, uwsgi_pass):
// nullopt when an entry exists (the URI is now that entry, as nginx sets
// it), else what the last entry says (a status, a URI or a named location).
std::optional<HandlerResult> apply_try_files(http::Exchange& ex);

// The static handler's steps that other file handlers (flv, mp4) share:
// opening a path with open_file_cache and disable_symlinks, the status
// and log line for a failed open, the conditional checks (a 304 with the
// validators answered here, a 412 as an error, nullopt to go on) and
// whether an If-Range lets a range through, for a body whose ETag is
// `etag` and whose Last-Modified is the file's (`last_modified`, its date).
OpenResult open_request_file(http::Exchange& ex, const std::string& path);
HandlerResult open_failure(const http::Exchange& ex, const std::string& path, int err);
std::optional<HandlerResult> answer_preconditions(http::Exchange& ex, const http::OpenFile& f, std::string_view etag,
                                                 std::string_view last_modified);
bool if_range_allows(const http::Exchange& ex, const http::OpenFile& f, std::string_view etag);

}  // namespace torii::handlers
