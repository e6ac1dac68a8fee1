#include "http/basic_credentials.h"

#include <strings.h>

#include "core/base64.h"

namespace torii::http {

bool basic_credentials(const RequestHead& req, BasicCredentials& out) {
  const Header* auth = nullptr;
  for (const auto& h : req.headers) {
    if (h.name.size() == 13 && strncasecmp(h.name.data(), "authorization", 13) == 0) {
      auth = &h;
      break;
    }
  }
  if (!auth) return false;
  std::string_view v = auth->value;
  if (v.size() < 6 || strncasecmp(v.data(), "basic ", 6) != 0) return false;
  v.remove_prefix(6);
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  out.decoded.clear();
  if (v.empty() || v.front() == '=' || !core::decode_base64(v, out.decoded)) return false;
  out.colon = out.decoded.find(':');
  return out.colon != 0 && out.colon != std::string::npos;
}

}  // namespace torii::http
