// MIME type by file extension, from the location's "types".
#include "config/config.h"

namespace torii::config {

std::string_view mime_type(const LocationSettings& s, std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view file = slash == std::string_view::npos ? path : path.substr(slash + 1);
  size_t dot = file.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == file.size() || !s.types) return s.default_type;
  std::string_view ext = file.substr(dot + 1);
  // Extensions are short; a stack copy keeps the lookup free of allocation
  // (the map's key type is std::string, so probe with a small-string value).
  char buf[16];
  if (ext.size() >= sizeof buf) return s.default_type;
  for (size_t i = 0; i < ext.size(); ++i) {
    char c = ext[i];
    buf[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  // std::string of < 16 chars fits the small-string buffer: no heap use.
  std::string key(buf, ext.size());
  auto it = s.types->find(key);
  if (it == s.types->end()) return s.default_type;
  return it->second;
}

}  // namespace torii::config
