// The static floor: answers every complete request head read on a
// keep-alive connection with the same response head torii sends (bytes
// given) and a file by sendfile. No parsing beyond finding "\r\n\r\n".
#pragma once

#include <string>

#include "loop.h"

namespace floor_bench {

struct StaticSite {
  std::string head;   // the response head, byte for byte
  std::string path;   // the file
  int file_fd = -1;   // kept open, unless open_each
  long size = 0;
  bool open_each = false;  // open, fstat and close the file per response, as torii without open_file_cache
};

// A new client connection of a static listener.
void serve_static(Loop& loop, int fd, const StaticSite& site);

}  // namespace floor_bench
