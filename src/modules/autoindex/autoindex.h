// The autoindex content handler: a listing of a directory that has no
// index file, in the location's autoindex_format.
#pragma once

#include <string>

#include "handlers/static_file.h"

namespace torii::autoindex {

// `dir` is the mapped path, ending in '/'. Runs where nginx's autoindex
// module would: after index found no file, for GET and HEAD.
handlers::HandlerResult serve(http::Exchange& ex, const std::string& dir);

}  // namespace torii::autoindex
