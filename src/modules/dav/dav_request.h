// What the WebDAV methods share: nginx's Depth parsing, its mapping of a
// failed system call to a status, and the Location of a created resource.
#pragma once

#include <string>
#include <string_view>

namespace torii::http {
class Exchange;
}

namespace torii::dav {

// The Depth header: 0, 1, infinity; absent gives `absent`, anything else
// is logged and gives kInvalidDepth.
constexpr int kInfinityDepth = -1;
constexpr int kInvalidDepth = -2;
int depth(const http::Exchange& ex, int absent);

// nginx's ngx_http_dav_error: logs "CALL \"PATH\" failed (errno: text)" and
// answers `not_found` for ENOENT/ENOTDIR/ENAMETOOLONG, 403 for
// EACCES/EPERM, 405 for EEXIST, 507 for ENOSPC, else 500.
int failed(const http::Exchange* ex, int err, int not_found, const char* call, const std::string& path);

// nginx's NGX_ESCAPE_URI set (1.22): controls, space, '"', '#', '%', '<',
// '>', '?', '\\', '^', '`', '{', '|', '}' and bytes above 0x7e are
// percent-encoded (Location, and dav_ext's hrefs).
std::string escape_uri(std::string_view uri);

// Sends `status` (201 or 204) with no body; a 201 carries Location: the
// request's URI, escaped, made absolute as nginx's header filter does.
void respond(http::Exchange& ex, int status);

// The method may have changed files: a static request later in this loop
// turn opens them afresh (see OpenFileCache::open_this_turn).
void files_changed(http::Exchange& ex);

// A request body on a method that takes none: nginx answers 415.
bool has_body(const http::Exchange& ex);

}  // namespace torii::dav
