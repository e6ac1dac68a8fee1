// The random_index module (nginx's ngx_http_random_index_module): a request
// for a directory (a URI ending in '/') in a location with
// `random_index on` is redirected internally to one of the directory's
// files, picked at random, before index files are looked for.
#pragma once

#include <string>

namespace torii::http {
class Exchange;
}

namespace torii::random_index {

struct Pick {
  std::string name;  // a regular file's name in the directory (or a link to one)
  int status = 0;    // the directory could not be read: answer this
};

// An empty name and no status: the directory has no such file, and the
// index files are tried as usual. `dir` ends in '/'.
Pick pick_file(http::Exchange& ex, const std::string& dir);

}  // namespace torii::random_index
