#include "modules/dav/dav.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "config/config.h"
#include "http/document_root.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/pipeline.h"
#include "log/error_log.h"
#include "modules/dav/dav_files.h"
#include "modules/dav/dav_methods.h"
#include "modules/dav/dav_request.h"

namespace torii::dav {

namespace {

using config::DavSettings;
using http::Exchange;
using http::Method;

uint8_t method_bit(Method m) {
  switch (m) {
    case Method::put:
      return DavSettings::put;
    case Method::del:
      return DavSettings::del;
    case Method::mkcol:
      return DavSettings::mkcol;
    case Method::copy:
      return DavSettings::copy;
    case Method::move:
      return DavSettings::move;
    default:
      return 0;
  }
}

// min_delete_depth N: the URI must have N slashes with something after the
// last counted one ("/a/b" has depth 2 only with a name after "/a/").
bool deep_enough(const Exchange& ex, uint32_t min_depth) {
  const std::string& uri = ex.req.path;
  uint32_t d = 0;
  for (size_t i = 0; i < uri.size();) {
    if (uri[i++] == '/' && ++d >= min_depth && i < uri.size()) return true;
  }
  TORII_LOG_EX(ex, error, "insufficient URI depth:%u to DELETE%s", d, http::log_context(ex).c_str());
  return false;
}

int delete_resource(Exchange& ex) {
  if (has_body(ex)) {
    TORII_LOG_EX(ex, error, "DELETE with body is unsupported%s", http::log_context(ex).c_str());
    return 415;
  }
  const DavSettings& dav = ex.settings().dav;
  if (dav.min_delete_depth != 0 && !deep_enough(ex, dav.min_delete_depth)) return 409;
  std::string path;
  if (!http::map_uri_to_path(ex, ex.req.path, path)) return 404;
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    const int err = errno;
    return failed(&ex, err, err == ENOTDIR ? 409 : 404, "lstat()", path);
  }
  const bool slash = ex.req.path.back() == '/';
  if (S_ISDIR(st.st_mode)) {
    if (!slash) {
      TORII_LOG_EX(ex, error, "DELETE \"%s\" failed (%d: %s)%s", path.c_str(), EISDIR, std::strerror(EISDIR),
                http::log_context(ex).c_str());
      return 409;
    }
    if (depth(ex, kInfinityDepth) != kInfinityDepth) {
      TORII_LOG_EX(ex, error, "\"Depth\" header must be infinity%s", http::log_context(ex).c_str());
      return 400;
    }
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    return delete_path(ex, path, true);
  }
  const int d = depth(ex, 0);
  if (d != 0 && d != kInfinityDepth) {
    TORII_LOG_EX(ex, error, "\"Depth\" header must be 0 or infinity%s", http::log_context(ex).c_str());
    return 400;
  }
  return delete_path(ex, path, false);
}

int make_collection(Exchange& ex) {
  if (has_body(ex)) {
    TORII_LOG_EX(ex, error, "MKCOL with body is unsupported%s", http::log_context(ex).c_str());
    return 415;
  }
  if (ex.req.path.back() != '/') {
    TORII_LOG_EX(ex, error, "MKCOL can create a collection only%s", http::log_context(ex).c_str());
    return 409;
  }
  std::string path;
  if (!http::map_uri_to_path(ex, ex.req.path, path)) return 404;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (::mkdir(path.c_str(), dir_access(ex.settings().dav.access)) == 0) return 201;
  return failed(&ex, errno, 409, "mkdir()", path);
}

}  // namespace

int delete_path(const Exchange& ex, const std::string& path, bool folder) {
  if (folder) {
    if (!remove_tree_contents(ex, path)) return 500;
    if (::rmdir(path.c_str()) == 0) return 204;
    return failed(&ex, errno, 404, "rmdir()", path);
  }
  if (::unlink(path.c_str()) == 0) return 204;
  return failed(&ex, errno, 404, "unlink()", path);
}

bool handles(const Exchange& ex) {
  const uint8_t bit = method_bit(ex.req.method);
  return bit != 0 && (ex.settings().dav.methods & bit) != 0;
}

void serve(Exchange& ex) {
  if (ex.req.path.empty() || ex.req.path[0] != '/') {
    http::send_error(ex, 400);
    return;
  }
  int status = 500;
  switch (ex.req.method) {
    case Method::put:
      start_put(ex);
      return;
    case Method::del:
      status = delete_resource(ex);
      break;
    case Method::mkcol:
      status = make_collection(ex);
      break;
    case Method::copy:
    case Method::move:
      status = copy_or_move(ex);
      break;
    default:
      break;
  }
  files_changed(ex);
  if (status == 201 || status == 204) {
    respond(ex, status);
  } else {
    http::send_error(ex, status);
  }
}

}  // namespace torii::dav
