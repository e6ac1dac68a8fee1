// COPY and MOVE with nginx's rules: the Destination must name this server
// (scheme, host) and a path that maps under the same root or alias; both
// URIs are collections or neither; Depth infinity (COPY also 0);
// Overwrite T/F (F and an existing target: 412).
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <string_view>

#include "http/document_root.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http1/parser.h"
#include "log/error_log.h"
#include "modules/dav/dav_files.h"
#include "modules/dav/dav_methods.h"
#include "modules/dav/dav_request.h"

namespace torii::dav {

namespace {

using http::Exchange;
using http::Method;

int invalid_destination(const Exchange& ex, std::string_view value) {
  TORII_LOG_EX(ex, error, "client sent invalid \"Destination\" header: \"%.*s\"%s", static_cast<int>(value.size()), value.data(),
            http::log_context(ex).c_str());
  return 400;
}

// A ".." segment anywhere: nginx refuses such a Destination outright.
bool has_parent_segment(std::string_view p) {
  for (size_t i = 0; i + 2 <= p.size(); ++i) {
    if (p[i] == '.' && p[i + 1] == '.' && (i == 0 || p[i - 1] == '/') && (i + 2 == p.size() || p[i + 2] == '/'))
      return true;
  }
  return false;
}

// The Destination's path, decoded; 0 or the status that refuses it.
int destination_path(const Exchange& ex, std::string_view value, std::string& uri) {
  std::string_view path;
  if (!value.empty() && value[0] == '/') {
    path = value;
  } else {
    const std::string& host = ex.req.host;
    if (host.empty()) {
      TORII_LOG_EX(ex, error, "client sent no \"Host\" header%s", http::log_context(ex).c_str());
      return 400;
    }
    const std::string_view scheme = ex.conn().tls ? "https://" : "http://";
    if (!value.starts_with(scheme)) return invalid_destination(ex, value);
    std::string_view rest = value.substr(scheme.size());
    if (!rest.starts_with(host)) {
      TORII_LOG_EX(ex, error, "\"Destination\" URI \"%.*s\" is handled by different repository than the source URI%s",
                static_cast<int>(value.size()), value.data(), http::log_context(ex).c_str());
      return 400;
    }
    const size_t slash = rest.find('/', host.size());
    if (slash == std::string_view::npos) return invalid_destination(ex, value);
    path = rest.substr(slash);
  }
  if (const size_t q = path.find('?'); q != std::string_view::npos) path = path.substr(0, q);
  if (path.empty() || has_parent_segment(path) || !http1::normalize_path(path, true, uri) || has_parent_segment(uri))
    return invalid_destination(ex, value);
  return 0;
}

void merge_slashes(std::string& p) {
  size_t out = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '/' && out > 0 && p[out - 1] == '/') continue;
    p[out++] = p[i];
  }
  p.resize(out);
}

// nginx's ngx_http_dav_validate_paths: the same place, or a collection
// into itself (or itself into what it holds), is 403.
bool paths_conflict(const Exchange& ex, std::string_view src, std::string_view dst, bool slash, std::string_view dest) {
  if (!src.empty() && src.back() == '/') src.remove_suffix(1);
  if (src == dst) {
    TORII_LOG_EX(ex, error, "both URI \"%s\" and \"Destination\" URI \"%.*s\" point to the same location%s", ex.req.path.c_str(),
              static_cast<int>(dest.size()), dest.data(), http::log_context(ex).c_str());
    return true;
  }
  const size_t n = std::min(src.size(), dst.size());
  if (slash && src.substr(0, n) == dst.substr(0, n) && (src.size() < dst.size() ? dst[src.size()] == '/' : src[n] == '/')) {
    TORII_LOG_EX(ex, error, "\"%s\" could not be %.*sed to collection \"%.*s\"%s", ex.req.path.c_str(),
              static_cast<int>(ex.req.method_name.size()), ex.req.method_name.data(), static_cast<int>(dest.size()),
              dest.data(), http::log_context(ex).c_str());
    return true;
  }
  return false;
}

}  // namespace

int copy_or_move(Exchange& ex) {
  const bool move = ex.req.method == Method::move;
  if (has_body(ex)) {
    TORII_LOG_EX(ex, error, "COPY and MOVE with body are unsupported%s", http::log_context(ex).c_str());
    return 415;
  }
  const http::Header* dest = ex.req.find("Destination");
  if (dest == nullptr) {
    TORII_LOG_EX(ex, error, "client sent no \"Destination\" header%s", http::log_context(ex).c_str());
    return 400;
  }
  const std::string_view dv = dest->value;
  std::string duri;
  if (int refused = destination_path(ex, dv, duri)) return refused;
  const bool src_slash = ex.req.path.back() == '/';
  if (src_slash != (dv.back() == '/')) {
    TORII_LOG_EX(ex, error, "both URI \"%s\" and \"Destination\" URI \"%.*s\" should be either collections or non-collections%s",
              ex.req.path.c_str(), static_cast<int>(dv.size()), dv.data(), http::log_context(ex).c_str());
    return 409;
  }
  const int d = depth(ex, kInfinityDepth);
  if (d != kInfinityDepth) {
    if (!move && d != 0) {
      TORII_LOG_EX(ex, error, "\"Depth\" header must be 0 or infinity%s", http::log_context(ex).c_str());
      return 400;
    }
    if (move) {
      TORII_LOG_EX(ex, error, "\"Depth\" header must be infinity%s", http::log_context(ex).c_str());
      return 400;
    }
  }
  bool overwrite = true;
  if (const http::Header* over = ex.req.find("Overwrite")) {
    const std::string_view v = over->value;
    if (v == "T" || v == "t") {
      overwrite = true;
    } else if (v == "F" || v == "f") {
      overwrite = false;
    } else {
      TORII_LOG_EX(ex, error, "client sent invalid \"Overwrite\" header: \"%.*s\"%s", static_cast<int>(v.size()), v.data(),
                http::log_context(ex).c_str());
      return 400;
    }
  }

  std::string src;
  std::string dst;
  if (!http::map_uri_to_path(ex, ex.req.path, src)) return 404;
  if (!http::map_uri_to_path(ex, duri, dst)) return invalid_destination(ex, dv);
  merge_slashes(src);
  merge_slashes(dst);
  const bool slash = dst.size() > 1 && dst.back() == '/';
  if (slash) dst.pop_back();
  if (paths_conflict(ex, src, dst, slash, dv)) return 403;

  bool dst_dir = false;
  struct stat st;
  if (::lstat(dst.c_str(), &st) != 0) {
    if (errno != ENOENT) return failed(&ex, errno, 404, "lstat()", dst);
    overwrite = false;  // nothing there to replace
  } else {
    if (S_ISDIR(st.st_mode) && !slash) {
      TORII_LOG_EX(ex, error, "\"%s\" could not be %.*sed to collection \"%.*s\"%s", ex.req.path.c_str(),
                static_cast<int>(ex.req.method_name.size()), ex.req.method_name.data(), static_cast<int>(dv.size()),
                dv.data(), http::log_context(ex).c_str());
      return 409;
    }
    if (!overwrite) {
      TORII_LOG_EX(ex, error, "\"%s\" could not be created (%d: %s)%s", dst.c_str(), EEXIST, std::strerror(EEXIST),
                http::log_context(ex).c_str());
      return 412;
    }
    dst_dir = S_ISDIR(st.st_mode);
  }

  if (::lstat(src.c_str(), &st) != 0) return failed(&ex, errno, 404, "lstat()", src);
  if (!S_ISDIR(st.st_mode)) {
    if (move) {
      RenameOptions o;
      o.folder_mode = dir_access(ex.settings().dav.access);
      o.create_path = true;
      return rename_file(ex, src, dst, o) ? 204 : 500;
    }
    return copy_file(ex, src, dst, st.st_mode & 0777, st.st_mtim.tv_sec) ? 204 : 500;
  }

  if (!src_slash) {
    TORII_LOG_EX(ex, error, "\"%s\" is collection%s", ex.req.path.c_str(), http::log_context(ex).c_str());
    return 400;
  }
  if (overwrite) {
    const int removed = delete_path(ex, dst, dst_dir);
    if (removed != 204) return removed;
  }
  while (src.size() > 1 && src.back() == '/') src.pop_back();
  if (move && ::rename(src.c_str(), dst.c_str()) == 0) return 201;
  if (::mkdir(dst.c_str(), st.st_mode & 0777) != 0) return failed(&ex, errno, 404, "mkdir()", dst);
  if (!copy_tree_contents(ex, src, dst)) return 500;
  if (move) {
    const int removed = delete_path(ex, src, true);
    if (removed != 204) return removed;
  }
  return 201;
}

}  // namespace torii::dav
