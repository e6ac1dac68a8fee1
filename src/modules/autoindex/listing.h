// A directory listing in nginx's autoindex formats. A pure function of
// the entries: reading the directory is the handler's job.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/autoindex_config.h"

namespace torii::autoindex {

struct Entry {
  std::string name;
  bool dir = false;
  bool file = false;   // a regular file (JSON and XML say "other" for the rest)
  int64_t mtime = 0;   // seconds since the epoch
  int64_t size = 0;
};

// nginx's order: directories first, then by name (byte order).
void sort_entries(std::vector<Entry>& entries);

struct ListingOptions {
  config::AutoindexConfig::Format format = config::AutoindexConfig::Format::html;
  bool exact_size = true;
  int64_t utc_offset_sec = 0;  // autoindex_localtime: the local zone's offset, else 0
  std::string_view uri;        // the decoded request path, for the HTML title
  std::string_view callback;   // jsonp: the callback's name (empty: plain JSON)
};

std::string render_listing(const std::vector<Entry>& entries, const ListingOptions& options);

// Checks a jsonp callback name the way nginx does: at most 128 of
// [A-Za-z0-9_.].
bool valid_callback(std::string_view name);

}  // namespace torii::autoindex
