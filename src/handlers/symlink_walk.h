// Opening a file with nginx's disable_symlinks: the path is walked one
// component at a time with openat(), each directory opened with O_PATH, so
// no link is followed where the policy forbids one.
//
//   on            every component is opened with O_NOFOLLOW: a link as the
//                 last component fails with ELOOP (403), a link to a
//                 directory is opened as the link itself and the next step
//                 fails with ENOTDIR (404), as nginx's walk does
//   if_not_owner  links are followed, but a component whose link (or
//                 itself) and target have different owners fails with ELOOP
//   from          the first `from` bytes of the path (a directory) are
//                 opened as a whole, links and all; the walk starts there
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace torii::handlers {

struct SymlinkPolicy {
  enum class Mode : uint8_t { off, on, if_not_owner };
  Mode mode = Mode::off;
  size_t from = 0;  // length of the prefix trusted as is; 0: walk from "/"
  bool operator==(const SymlinkPolicy&) const = default;
};

// The policy for `path` given the location's mode and its rendered `from=`
// (empty: none), as nginx's ngx_http_set_disable_symlinks decides it: a
// path equal to `from` is opened with no check, one under it is walked
// from there, any other from "/".
SymlinkPolicy symlink_policy_for(SymlinkPolicy::Mode mode, const std::string& from, const std::string& path);

// open(path, flags) under `policy` (flags gain O_CLOEXEC). Returns the
// descriptor, or -1 with errno set.
int open_with_policy(const std::string& path, int flags, const SymlinkPolicy& policy);

}  // namespace torii::handlers
