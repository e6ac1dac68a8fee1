// The WebDAV methods' handlers, each in its own file; dav.cc picks one.
#pragma once

#include <string>

namespace torii::http {
class Exchange;
}

namespace torii::dav {

// PUT: reads the body into a temporary file, then renames it into place
// and answers (dav_put.cc).
void start_put(http::Exchange& ex);

// COPY and MOVE: the status to answer (dav_copy_move.cc).
int copy_or_move(http::Exchange& ex);

// Removes a file, or a folder and what it holds: 204, or the failure's
// status (dav.cc; MOVE and an overwriting COPY use it too).
int delete_path(const http::Exchange& ex, const std::string& path, bool folder);

}  // namespace torii::dav
