// The compression module's settings for one block: gzip and gzip_*, with
// nginx's defaults, merged down http -> server -> location like the rest
// (a block shares its parent's object until one of its directives changes
// it). Brotli and zstd use the same shape under their own directive names.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace torii::config {

class Regex;

// gzip_proxied flags (nginx's bitmask; `off` is the absence of the others).
enum GzipProxied : uint32_t {
  kProxiedExpired = 1 << 0,
  kProxiedNoCache = 1 << 1,
  kProxiedNoStore = 1 << 2,
  kProxiedPrivate = 1 << 3,
  kProxiedNoLastModified = 1 << 4,
  kProxiedNoEtag = 1 << 5,
  kProxiedAuth = 1 << 6,
  kProxiedAny = 1 << 7,
};

// The MIME types one coding applies to (gzip_types, brotli_types...).
// text/html is always in; `any` is "*".
struct CompressTypes {
  std::vector<std::string> types{"text/html"};  // lower-case, no parameters
  bool any = false;
  bool matches(std::string_view content_type) const;
};

// Settings of one coding besides gzip (brotli_*, zstd_*).
struct CodingSettings {
  bool on = false;
  int static_files = 0;        // brotli_static / zstd_static: 0 off, 1 on, 2 always
  CompressTypes types;
  int level = 0;               // set per coding (brotli 6, zstd 1)
  int64_t min_length = 20;     // brotli_min_length / zstd_min_length
};

struct CompressionConfig {
  // gzip
  bool gzip = false;
  CompressTypes gzip_types;
  int gzip_level = 1;                 // gzip_comp_level 1..9
  int64_t min_length = 20;            // gzip_min_length, from Content-Length
  uint32_t proxied = 0;               // gzip_proxied; 0 is `off`
  bool vary = false;                  // gzip_vary
  std::vector<std::shared_ptr<Regex>> disable;  // gzip_disable regexes (caseless)
  bool disable_msie6 = false;         // gzip_disable msie6
  int http_version = 11;              // gzip_http_version 1.0 | 1.1
  // gzip_buffers NUMBER SIZE: compressed output is handed to the connection
  // once NUMBER*SIZE bytes have collected (or at a flush or the end), so it
  // bounds what the filter itself holds per response besides the encoder's
  // own state. nginx's default: 32 4k.
  int buffers_number = 32;
  int64_t buffers_size = 4096;
  // gzip_static: 0 off, 1 on, 2 always.
  int gzip_static = 0;
  bool gunzip = false;
  // gunzip_buffers NUMBER SIZE: the same bound for decoded output (32 4k).
  int gunzip_buffers_number = 32;
  int64_t gunzip_buffers_size = 4096;
  // Beyond nginx: ngx_brotli's and zstd-nginx-module's directives.
  CodingSettings brotli{false, 0, {}, 6, 20};
  CodingSettings zstd{false, 0, {}, 1, 20};

  // Whether any coding may apply to a response here (the header filter is
  // skipped otherwise).
  bool any_on() const { return gzip || brotli.on || zstd.on || gunzip; }
};

}  // namespace torii::config
