// The file-system work behind DELETE, COPY, MOVE and PUT, as nginx's
// ngx_walk_tree, ngx_copy_file and ngx_create_full_path do it. Trees are
// walked without following symbolic links: a link inside a folder is
// removed (DELETE) or skipped (COPY), never the place it points to.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace torii::http {
class Exchange;
}

namespace torii::dav {

// nginx's ngx_dir_access: a folder made with dav_access gets x where it has r.
constexpr mode_t dir_access(mode_t file_access) { return file_access | (file_access & 0444) >> 2; }

// Removes what is inside `dir` (files, links and folders, depth first); a
// failure on one entry is logged and the walk goes on, as nginx's DELETE.
// False (errno kept) only when `dir` itself could not be read.
bool remove_tree_contents(const http::Exchange& ex, const std::string& dir);

// Copies the tree inside `from` into the existing folder `to`: folders
// with their modes and times, regular files with theirs; links and
// special files are left out. Failures on entries are logged and skipped.
bool copy_tree_contents(const http::Exchange& ex, const std::string& from, const std::string& to);

// Copies one regular file to `to` (created or truncated with `mode`),
// then gives it `mtime` (seconds; -1 keeps now). Logs what failed.
bool copy_file(const http::Exchange& ex, const std::string& from, const std::string& to, mode_t mode, int64_t mtime);

// Makes every missing folder above the file `path` (nginx's
// ngx_create_full_path): 0 or the errno of the mkdir that failed.
int create_parent_folders(const std::string& path, mode_t mode);

// Moves `from` to `to`, making missing folders above `to` when
// `create_path`, and copying when they are on different file systems. The
// file keeps `mode` when not 0 and `mtime` when not -1 (applied to `fd`
// when it is open, else to `from`). On failure `from` is removed when
// `delete_on_failure`, the failure is logged, and false returned.
struct RenameOptions {
  mode_t mode = 0;
  mode_t folder_mode = 0700;
  int64_t mtime = -1;
  int fd = -1;
  bool create_path = false;
  bool delete_on_failure = false;
};
bool rename_file(const http::Exchange& ex, const std::string& from, const std::string& to, const RenameOptions& o);

}  // namespace torii::dav
