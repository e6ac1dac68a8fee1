#include "modules/ssi/include_uri.h"

namespace torii::ssi {

namespace {

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string decoded(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%' && i + 2 < in.size() && hex(in[i + 1]) >= 0 && hex(in[i + 2]) >= 0) {
      out.push_back(char(hex(in[i + 1]) * 16 + hex(in[i + 2])));
      i += 2;
      continue;
    }
    out.push_back(in[i]);
  }
  return out;
}

// A NUL, or ".." as a whole segment.
bool unsafe(std::string_view p) {
  if (p.find('\0') != std::string_view::npos) return true;
  size_t start = 0;
  while (start <= p.size()) {
    size_t slash = p.find('/', start);
    if (slash == std::string_view::npos) slash = p.size();
    if (p.substr(start, slash - start) == "..") return true;
    start = slash + 1;
  }
  return false;
}

}  // namespace

bool include_uri(std::string_view uri, std::string_view page, std::string& path, std::string& args) {
  std::string full;
  if (!uri.empty() && uri.front() != '/') {
    const size_t slash = page.rfind('/');
    if (slash != std::string_view::npos) full.assign(page.substr(0, slash + 1));
  }
  full.append(uri);
  if (full.empty() || full.front() == '?') return false;
  const size_t q = full.find('?');
  args = q == std::string::npos ? std::string() : full.substr(q + 1);
  const std::string_view raw = std::string_view(full).substr(0, q == std::string::npos ? full.size() : q);
  if (unsafe(raw)) return false;
  path = decoded(raw);
  return !unsafe(path);
}

}  // namespace torii::ssi
