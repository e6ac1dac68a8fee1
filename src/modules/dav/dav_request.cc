#include "modules/dav/dav_request.h"

#include <errno.h>

#include <cstring>

#include "handlers/open_file_cache.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/pipeline.h"
#include "http/special_response.h"
#include "log/error_log.h"

namespace torii::dav {

int depth(const http::Exchange& ex, int absent) {
  const http::Header* h = ex.req.find("Depth");
  if (h == nullptr) return absent;
  if (h->value == "0") return 0;
  if (h->value == "1") return 1;
  if (h->value == "infinity") return kInfinityDepth;
  TORII_LOG_EX(ex, error, "client sent invalid \"Depth\" header: \"%.*s\"%s", static_cast<int>(h->value.size()), h->value.data(),
            http::log_context(ex).c_str());
  return kInvalidDepth;
}

int failed(const http::Exchange* ex, int err, int not_found, const char* call, const std::string& path) {
  int status = 500;
  bool crit = true;
  if (err == ENOENT || err == ENOTDIR || err == ENAMETOOLONG) {
    status = not_found;
    crit = false;
  } else if (err == EACCES || err == EPERM) {
    status = 403;
    crit = false;
  } else if (err == EEXIST) {
    status = 405;
    crit = false;
  } else if (err == ENOSPC) {
    status = 507;
  }
  const std::string ctx = ex != nullptr ? http::log_context(*ex) : std::string();
  if (crit) {
    TORII_LOG(crit, "%s \"%s\" failed (%d: %s)%s", call, path.c_str(), err, std::strerror(err), ctx.c_str());
  } else {
    TORII_LOG(error, "%s \"%s\" failed (%d: %s)%s", call, path.c_str(), err, std::strerror(err), ctx.c_str());
  }
  return status;
}

std::string escape_uri(std::string_view uri) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(uri.size());
  for (const char ch : uri) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f || std::string_view("\"#%<>?\\^`{|}").find(ch) != std::string_view::npos) {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    } else {
      out.push_back(ch);
    }
  }
  return out;
}

void respond(http::Exchange& ex, int status) {
  if (status == 201) ex.response.add("Location", http::absolute_location(ex, escape_uri(ex.req.path)));
  http::send_error(ex, status);
}

void files_changed(http::Exchange& ex) {
  if (handlers::OpenFileCache* files = ex.services().open_files) files->forget_this_turn();
}

bool has_body(const http::Exchange& ex) { return ex.has_body(); }

}  // namespace torii::dav
