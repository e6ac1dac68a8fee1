// The response of a file handler whose body is bytes it made followed by
// part of a file: flv's header and the file from ?start, mp4's rewritten
// moov and the kept part of mdat, or either module's file as it is. As
// nginx's flv and mp4 handlers leave it to the filters: Last-Modified of
// the file, an ETag of its mtime and the body's length, the conditional
// checks, and byte ranges over the body (several as multipart only when
// the body is the file's bytes alone; else, as nginx's `single_range`,
// several ranges get the whole body).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "handlers/static_file.h"

namespace torii::http {
class Exchange;
struct OpenFile;
}  // namespace torii::http

namespace torii::handlers {

struct FileCut {
  std::shared_ptr<const http::OpenFile> file;
  std::string prefix;       // sent first
  int64_t offset = 0;       // then these bytes of the file
  int64_t length = 0;
  bool single_range = false;  // several ranges: the whole body
};

// The steps before the cut, as nginx's flv and mp4 handlers take them: GET
// and HEAD only (else 405), try_files, a URI ending in "/" or naming a
// folder left to the static handler (index, autoindex, the redirect to
// "dir/"), the path mapped and the file opened (the static handler's
// statuses and log lines when it cannot be). Sets `file` and returns
// nullopt, or returns the result that answered the request.
std::optional<HandlerResult> open_cut_source(http::Exchange& ex, std::shared_ptr<const http::OpenFile>& file);

HandlerResult send_file_cut(http::Exchange& ex, FileCut cut);

}  // namespace torii::handlers
