#include "http/etag.h"

namespace torii::http {

namespace {

size_t put_hex(uint64_t v, char* out) {
  char tmp[16];
  size_t n = 0;
  do {
    tmp[n++] = "0123456789abcdef"[v & 0xf];
    v >>= 4;
  } while (v != 0);
  for (size_t i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
  return n;
}

bool is_ows(char c) { return c == ' ' || c == '\t'; }

// Walks a comma-separated list of entity-tags, calling `fn(tag, weak)` with
// each tag including its quotes; `fn` returns true to stop. Returns true if
// `fn` stopped the walk or the list holds "*".
template <typename Fn>
bool walk_tags(std::string_view h, Fn fn) {
  size_t i = 0;
  while (i < h.size()) {
    while (i < h.size() && (is_ows(h[i]) || h[i] == ',')) ++i;
    if (i >= h.size()) break;
    if (h[i] == '*') return true;
    bool weak = false;
    if (h.size() - i >= 2 && h[i] == 'W' && h[i + 1] == '/') {
      weak = true;
      i += 2;
    }
    if (i >= h.size() || h[i] != '"') return false;
    const size_t close = h.find('"', i + 1);
    if (close == std::string_view::npos) return false;
    if (fn(h.substr(i, close + 1 - i), weak)) return true;
    i = close + 1;
    while (i < h.size() && is_ows(h[i])) ++i;
    if (i < h.size() && h[i] != ',') return false;
  }
  return false;
}

// Our own tag without a W/ prefix, for comparing opaque parts.
std::string_view opaque(std::string_view etag, bool& weak) {
  weak = etag.size() >= 2 && etag[0] == 'W' && etag[1] == '/';
  return weak ? etag.substr(2) : etag;
}

}  // namespace

size_t format_etag(int64_t mtime, int64_t size, char* out) {
  size_t n = 0;
  out[n++] = '"';
  n += put_hex(static_cast<uint64_t>(mtime), out + n);
  out[n++] = '-';
  n += put_hex(static_cast<uint64_t>(size), out + n);
  out[n++] = '"';
  return n;
}

std::string make_etag(int64_t mtime, int64_t size) {
  char buf[kMaxEtagLen];
  return std::string(buf, format_etag(mtime, size, buf));
}

bool none_match_hits(std::string_view header, std::string_view etag) {
  bool our_weak = false;
  const std::string_view ours = opaque(etag, our_weak);
  return walk_tags(header, [&](std::string_view tag, bool) { return !ours.empty() && tag == ours; });
}

bool match_hits_strong(std::string_view header, std::string_view etag) {
  bool our_weak = false;
  const std::string_view ours = opaque(etag, our_weak);
  return walk_tags(header, [&](std::string_view tag, bool weak) {
    return !weak && !our_weak && !ours.empty() && tag == ours;
  });
}

}  // namespace torii::http
