// The WebDAV extension's settings (the nginx-dav-ext-module Debian packages
// as libnginx-mod-http-dav-ext): which of PROPFIND, OPTIONS, LOCK and
// UNLOCK a block answers, and the lock zone its locks live in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace torii::dav_ext {
class LockTable;  // modules/dav_ext/lock_table.h
}

namespace torii::config {

// dav_ext_lock_zone zone=NAME:SIZE [timeout=T]: made on the first mention
// of the name (dav_ext_lock may name a zone written later in the http
// block); `defined` once its dav_ext_lock_zone line ran. The table is the
// process-wide one of that name and size, so locks outlive a reload, as
// they outlive one in nginx's shared memory.
struct DavExtLockZone {
  std::string name;
  bool defined = false;
  size_t size = 0;
  int64_t timeout_s = 60;  // the module's default: a minute
  std::shared_ptr<dav_ext::LockTable> table;
};

struct DavExtSettings {
  enum Method : uint8_t { propfind = 1, options = 2, lock = 4, unlock = 8 };
  uint8_t methods = 0;  // `dav_ext_methods`: the Method bits; 0: none
  // `dav_ext_lock zone=NAME`: null without one. With one, PUT, DELETE,
  // MKCOL, MOVE and COPY check the zone's locks before they run.
  std::shared_ptr<const DavExtLockZone> lock_zone;
};

}  // namespace torii::config
