// The compression module's directives: nginx's gzip, gzip_* and gunzip,
// and the brotli_* (ngx_brotli) and zstd_* (zstd-nginx-module) directives
// under those modules' names, with their defaults (compression_config.h).
#include <algorithm>
#include <string>

#include "config/compression_config.h"
#include "core/quote.h"
#include "config/directives.h"
#include "config/regex.h"

namespace torii::config {

namespace {

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Copy-on-write: a block shares its parent's settings until it changes one.
template <typename F>
Status edit(Scope& s, F&& f) {
  auto c = s.settings->compression ? std::make_shared<CompressionConfig>(*s.settings->compression)
                                   : std::make_shared<CompressionConfig>();
  Status st = f(*c);
  if (!st) return st;
  s.settings->compression = std::move(c);
  return Ok{};
}

// Scope::compression_here bits: a *_types list or gzip_disable given in a
// block replaces the inherited one (nginx's merge); repeats in the same
// block add to it.
enum : uint32_t { kGzipTypesHere = 1, kBrotliTypesHere = 2, kZstdTypesHere = 4, kDisableHere = 8 };

template <bool CompressionConfig::*F>
Status flag(Compiler&, Scope& s, const Node& n) {
  return edit(s, [&](CompressionConfig& c) -> Status {
    c.*F = n.args[0] == "on";
    return Ok{};
  });
}

template <CodingSettings CompressionConfig::*C, bool CodingSettings::*F>
Status coding_flag(Compiler&, Scope& s, const Node& n) {
  return edit(s, [&](CompressionConfig& c) -> Status {
    (c.*C).*F = n.args[0] == "on";
    return Ok{};
  });
}

// Adds a *_types directive's arguments; the first in a block replaces the
// inherited list (text/html stays in either way).
void apply_types(CompressTypes& t, bool first, const Node& n) {
  if (first) t = CompressTypes{};
  for (const auto& a : n.args) {
    if (a == "*") {
      t.any = true;
      continue;
    }
    std::string type = lower(a);
    if (std::find(t.types.begin(), t.types.end(), type) == t.types.end()) t.types.push_back(std::move(type));
  }
}

Status set_gzip_types(Compiler&, Scope& s, const Node& n) {
  Status st = edit(s, [&](CompressionConfig& c) -> Status {
    apply_types(c.gzip_types, !(s.compression_here & kGzipTypesHere), n);
    return Ok{};
  });
  s.compression_here |= kGzipTypesHere;
  return st;
}

template <CodingSettings CompressionConfig::*C, uint32_t Bit>
Status set_coding_types(Compiler&, Scope& s, const Node& n) {
  Status st = edit(s, [&](CompressionConfig& c) -> Status {
    apply_types((c.*C).types, !(s.compression_here & Bit), n);
    return Ok{};
  });
  s.compression_here |= Bit;
  return st;
}

bool parse_level(std::string_view v, int lo, int hi, int& out) {
  uint64_t n = 0;
  if (!parse_number(v, n) || n < uint64_t(lo) || n > uint64_t(hi)) return false;
  out = int(n);
  return true;
}

Status set_gzip_level(Compiler&, Scope& s, const Node& n) {
  int level = 0;
  // nginx's message for a level out of 1..9.
  if (!parse_level(n.args[0], 1, 9, level)) {
    uint64_t v = 0;
    if (parse_number(n.args[0], v)) return node_error(n, "value must be between 1 and 9");
    return invalid_value(n, n.args[0]);
  }
  return edit(s, [&](CompressionConfig& c) -> Status {
    c.gzip_level = level;
    return Ok{};
  });
}

// brotli_comp_level 0..11, zstd_comp_level 1..22 (the libraries' ranges).
template <CodingSettings CompressionConfig::*C, int Lo, int Hi>
Status set_coding_level(Compiler&, Scope& s, const Node& n) {
  int level = 0;
  if (!parse_level(n.args[0], Lo, Hi, level)) {
    return node_error(n, "value must be between " + std::to_string(Lo) + " and " + std::to_string(Hi));
  }
  return edit(s, [&](CompressionConfig& c) -> Status {
    (c.*C).level = level;
    return Ok{};
  });
}

Status set_min_length(Compiler&, Scope& s, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return invalid_value(n, n.args[0]);
  return edit(s, [&](CompressionConfig& c) -> Status {
    c.min_length = v;
    return Ok{};
  });
}

template <CodingSettings CompressionConfig::*C>
Status set_coding_min_length(Compiler&, Scope& s, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return invalid_value(n, n.args[0]);
  return edit(s, [&](CompressionConfig& c) -> Status {
    (c.*C).min_length = v;
    return Ok{};
  });
}

Status set_proxied(Compiler&, Scope& s, const Node& n) {
  static constexpr std::pair<std::string_view, uint32_t> kNames[] = {
      {"off", 0},
      {"expired", kProxiedExpired},
      {"no-cache", kProxiedNoCache},
      {"no-store", kProxiedNoStore},
      {"private", kProxiedPrivate},
      {"no_last_modified", kProxiedNoLastModified},
      {"no_etag", kProxiedNoEtag},
      {"auth", kProxiedAuth},
      {"any", kProxiedAny},
  };
  uint32_t mask = 0;
  bool off = false;
  for (const auto& a : n.args) {
    auto it = std::find_if(std::begin(kNames), std::end(kNames), [&](const auto& p) { return p.first == a; });
    if (it == std::end(kNames)) return invalid_value(n, a);
    if (it->second == 0) off = true;
    mask |= it->second;
  }
  // As nginx: "off" among other values turns the whole list off.
  if (off) mask = 0;
  return edit(s, [&](CompressionConfig& c) -> Status {
    c.proxied = mask;
    return Ok{};
  });
}

Status set_disable(Compiler&, Scope& s, const Node& n) {
  Status st = edit(s, [&](CompressionConfig& c) -> Status {
    if (!(s.compression_here & kDisableHere)) {
      c.disable.clear();
      c.disable_msie6 = false;
    }
    for (const auto& a : n.args) {
      if (a == "msie6") {
        c.disable_msie6 = true;
        continue;
      }
      auto re = Regex::compile(a, /*caseless=*/true);
      if (!re) return node_error(n, re.error());
      c.disable.push_back(std::move(*re));
    }
    return Ok{};
  });
  s.compression_here |= kDisableHere;
  return st;
}

Status set_http_version(Compiler&, Scope& s, const Node& n) {
  int v = 0;
  if (n.args[0] == "1.0") v = 10;
  else if (n.args[0] == "1.1") v = 11;
  else return invalid_value(n, n.args[0]);
  return edit(s, [&](CompressionConfig& c) -> Status {
    c.http_version = v;
    return Ok{};
  });
}

template <int CompressionConfig::*Number, int64_t CompressionConfig::*Size>
Status set_buffers(Compiler&, Scope& s, const Node& n) {
  uint64_t number = 0;
  int64_t size = 0;
  if (!parse_number(n.args[0], number) || number == 0 || number > 1024) return invalid_value(n, n.args[0]);
  if (!parse_size(n.args[1], size) || size <= 0 || size > (64 << 20)) return invalid_value(n, n.args[1]);
  return edit(s, [&](CompressionConfig& c) -> Status {
    c.*Number = int(number);
    c.*Size = size;
    return Ok{};
  });
}

// gzip_static, brotli_static, zstd_static: on | off | always.
bool parse_static(std::string_view v, int& out) {
  if (v == "off") out = 0;
  else if (v == "on") out = 1;
  else if (v == "always") out = 2;
  else return false;
  return true;
}

Status set_gzip_static(Compiler&, Scope& s, const Node& n) {
  int v = 0;
  if (!parse_static(n.args[0], v)) return invalid_value(n, n.args[0]);
  return edit(s, [&](CompressionConfig& c) -> Status {
    c.gzip_static = v;
    return Ok{};
  });
}

template <CodingSettings CompressionConfig::*C>
Status set_coding_static(Compiler&, Scope& s, const Node& n) {
  int v = 0;
  if (!parse_static(n.args[0], v)) return invalid_value(n, n.args[0]);
  return edit(s, [&](CompressionConfig& c) -> Status {
    (c.*C).static_files = v;
    return Ok{};
  });
}

// Accepted and ignored, with a warning: zlib tuning nginx exposes that
// changes nothing a client sees.
Status accepted(Compiler& c, Scope&, const Node& n) {
  c.warn(n, q(n.name) + " is accepted and ignored");
  return Ok{};
}

Status set_gzip_window_or_hash(Compiler& c, Scope& s, const Node& n) { return accepted(c, s, n); }

constexpr DirectiveSpec kGzipDirectives[] = {
    {"gzip", kHSL, kFlag, true, false, kMain, &flag<&CompressionConfig::gzip>},
    {"gzip_types", kHSL, kArgs1More, false, false, kMain, &set_gzip_types},
    {"gzip_comp_level", kHSL, kArgs1, true, false, kMain, &set_gzip_level},
    {"gzip_min_length", kHSL, kArgs1, true, false, kMain, &set_min_length},
    {"gzip_proxied", kHSL, kArgs1More, true, false, kMain, &set_proxied},
    {"gzip_vary", kHSL, kFlag, true, false, kMain, &flag<&CompressionConfig::vary>},
    {"gzip_disable", kHSL, kArgs1More, false, false, kMain, &set_disable},
    {"gzip_http_version", kHSL, kArgs1, true, false, kMain, &set_http_version},
    {"gzip_buffers", kHSL, kArgs2, true, false, kMain,
     &set_buffers<&CompressionConfig::buffers_number, &CompressionConfig::buffers_size>},
    {"gzip_static", kHSL, kArgs1, true, false, kMain, &set_gzip_static},
    {"gunzip", kHSL, kFlag, true, false, kMain, &flag<&CompressionConfig::gunzip>},
    {"gunzip_buffers", kHSL, kArgs2, true, false, kMain,
     &set_buffers<&CompressionConfig::gunzip_buffers_number, &CompressionConfig::gunzip_buffers_size>},
    {"gzip_window", kHSL, kArgs1, true, false, kMain, &set_gzip_window_or_hash},
    {"gzip_hash", kHSL, kArgs1, true, false, kMain, &set_gzip_window_or_hash},
    // ngx_brotli
    {"brotli", kHSL, kFlag, true, false, kMain, &coding_flag<&CompressionConfig::brotli, &CodingSettings::on>},
    {"brotli_static", kHSL, kArgs1, true, false, kMain, &set_coding_static<&CompressionConfig::brotli>},
    {"brotli_types", kHSL, kArgs1More, false, false, kMain,
     &set_coding_types<&CompressionConfig::brotli, kBrotliTypesHere>},
    {"brotli_comp_level", kHSL, kArgs1, true, false, kMain, &set_coding_level<&CompressionConfig::brotli, 0, 11>},
    {"brotli_min_length", kHSL, kArgs1, true, false, kMain, &set_coding_min_length<&CompressionConfig::brotli>},
    // zstd-nginx-module
    {"zstd", kHSL, kFlag, true, false, kMain, &coding_flag<&CompressionConfig::zstd, &CodingSettings::on>},
    {"zstd_static", kHSL, kArgs1, true, false, kMain, &set_coding_static<&CompressionConfig::zstd>},
    {"zstd_types", kHSL, kArgs1More, false, false, kMain, &set_coding_types<&CompressionConfig::zstd, kZstdTypesHere>},
    {"zstd_comp_level", kHSL, kArgs1, true, false, kMain, &set_coding_level<&CompressionConfig::zstd, 1, 22>},
    {"zstd_min_length", kHSL, kArgs1, true, false, kMain, &set_coding_min_length<&CompressionConfig::zstd>},
};

}  // namespace

std::span<const DirectiveSpec> gzip_directives() { return kGzipDirectives; }

}  // namespace torii::config
