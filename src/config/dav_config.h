// The WebDAV module's settings for one block (nginx's ngx_http_dav_module):
// which methods it handles, the modes of what it creates, how shallow a
// DELETE may be, and whether PUT makes missing folders.
#pragma once

#include <cstdint>

namespace torii::config {

struct DavSettings {
  enum Method : uint8_t { put = 1, del = 2, mkcol = 4, copy = 8, move = 16 };
  uint8_t methods = 0;           // `dav_methods`: the Method bits; 0: off
  uint16_t access = 0600;        // `dav_access`: mode of created files (folders add x where r)
  uint32_t min_delete_depth = 0;  // `min_delete_depth`: fewer URI segments than this: 409
  bool create_full_put_path = false;
};

}  // namespace torii::config
