// normalize_path: percent-decoding and dot-segment removal in one pass.
//
// Decoded bytes are fed to the segment logic as if they had arrived raw, so
// "%2e%2e" is "..", and "%2F" separates segments (nginx does the same; a
// path that means "/a/b" on disk must match location /a/ too). A decoded
// byte is never decoded again: "%252e" is the three bytes "%2e".
#include <string>
#include <string_view>

#include "http1/parser.h"

namespace torii::http1 {

namespace {

inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Called when a '/' (raw or decoded) ends the segment that starts at
// out[seg]; out[seg - 1] is always '/'. Returns false for ".." at the root.
inline bool end_segment(std::string& out, size_t& seg, bool merge_slashes, bool last) {
  const size_t len = out.size() - seg;
  if (len == 0) {
    // An empty segment: "//" (or the end right after a '/').
    if (last || merge_slashes) return true;
  } else if (len == 1 && out[seg] == '.') {
    out.resize(seg);
    return true;
  } else if (len == 2 && out[seg] == '.' && out[seg + 1] == '.') {
    if (seg == 1) return false;  // above the root
    out.resize(seg - 1);         // drop ".." and the '/' before it
    seg = out.rfind('/') + 1;    // then the segment it cancels
    out.resize(seg);
    return true;
  } else if (last) {
    return true;
  }
  out.push_back('/');
  seg = out.size();
  return true;
}

}  // namespace

bool normalize_path(std::string_view raw, bool merge_slashes, std::string& out) {
  out.clear();
  if (raw.empty() || raw[0] != '/') return false;
  out.reserve(raw.size());
  out.push_back('/');
  size_t seg = 1;  // start of the current segment in `out`
  const char* p = raw.data();
  const size_t n = raw.size();
  size_t i = 1;
  while (i < n) {
    const char c = p[i];
    if (c == '/') {
      if (!end_segment(out, seg, merge_slashes, false)) return false;
      ++i;
      continue;
    }
    if (c == '%') {
      if (n - i < 3) return false;
      const int hi = hex_value(p[i + 1]);
      const int lo = hex_value(p[i + 2]);
      if (hi < 0 || lo < 0) return false;
      const char d = static_cast<char>(hi * 16 + lo);
      if (d == '\0') return false;
      i += 3;
      if (d == '/') {
        if (!end_segment(out, seg, merge_slashes, false)) return false;
      } else {
        out.push_back(d);
      }
      continue;
    }
    // Copy the run of plain bytes up to the next '/' or '%' at once.
    size_t j = i + 1;
    while (j < n && p[j] != '/' && p[j] != '%') ++j;
    out.append(p + i, j - i);
    i = j;
  }
  return end_segment(out, seg, merge_slashes, true);
}

}  // namespace torii::http1
