// LOCK and UNLOCK as the dav-ext module answers them: exclusive write
// locks only (the body, which would say so, is not read), Depth 0 or
// infinity (the default; 1 is a 400), the zone's timeout whatever the
// Timeout field asks. A LOCK on a URI with nothing there creates an
// empty file (RFC 4918 7.3); one that offers the token of the lock
// already there renews it. UNLOCK answers 204 whether or not a lock went.
#include <errno.h>
#include <fcntl.h>
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
#include "modules/dav/dav_request.h"
#include "modules/dav_ext/dav_ext_methods.h"
#include "modules/dav_ext/lock_table.h"
#include "modules/dav_ext/lock_xml.h"

namespace torii::dav_ext {

namespace {

using http::Exchange;

// Creates the empty file an unmapped URI's lock stands for: 201, 200 when
// something is there already, or 409 (no parent folder: RFC 4918 says
// not to make one).
int create_locked_resource(Exchange& ex) {
  std::string path;
  if (!http::map_uri_to_path(ex, ex.req.path, path)) return 409;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return 200;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CREAT, 0644);
  if (fd < 0) {
    TORII_LOG_EX(ex, error, "open() \"%s\" failed (%d: %s)%s", path.c_str(), errno, strerror(errno),
                 http::log_context(ex).c_str());
    return 409;
  }
  if (::close(fd) != 0) {
    TORII_LOG_EX(ex, alert, "close() \"%s\" failed (%d: %s)%s", path.c_str(), errno, strerror(errno),
                 http::log_context(ex).c_str());
    return 500;
  }
  dav::files_changed(ex);
  return 201;
}

void send_lock(Exchange& ex, int status, const Lock& granted, int64_t now) {
  std::string body(kXmlDeclaration);
  body += "<D:prop xmlns:D=\"DAV:\">\n";
  append_lockdiscovery(body, &granted, now);
  body += "</D:prop>\n";
  http::ResponseHead head;
  head.status = status;
  head.add("Content-Type", "text/xml; charset=utf-8");
  std::string token;
  append_token(token, granted.token, true);
  head.add("Lock-Token", std::move(token));
  head.content_length = int64_t(body.size());
  ex.send_head(std::move(head));
  ex.send_body(body);
  ex.finish();
}

}  // namespace

void lock(Exchange& ex) {
  const config::DavExtLockZone& zone = *ex.settings().dav_ext.lock_zone;
  const std::string& uri = ex.req.path;
  // RFC 4918 9.10.3: no Depth is infinity; 1 is not allowed.
  const int depth = dav::depth(ex, dav::kInfinityDepth);
  if (uri.empty() || depth == dav::kInvalidDepth || depth == 1) {
    http::send_error(ex, 400);
    return;
  }
  const bool infinite = depth == dav::kInfinityDepth;
  const int64_t now = now_s();
  const LockTable::Granted g =
      zone.table->lock(uri, infinite, offered_token(ex, uri), new_lock_token(), zone.timeout_s, now);
  if (g.status != 0) {
    http::send_error(ex, g.status);
    return;
  }
  // The answer names the request's URI as the root, a renewed lock's too.
  const Lock granted{uri, g.token, now + zone.timeout_s, infinite};
  if (g.refreshed) {
    send_lock(ex, 200, granted, now);
    return;
  }
  const int status = create_locked_resource(ex);
  if (status >= 400) {
    // Unlike the module, the lock goes with the failure: it would hold a
    // URI with nothing behind it until it expired.
    zone.table->remove(uri, g.token);
    http::send_error(ex, status);
    return;
  }
  send_lock(ex, status, granted, now);
}

void unlock(Exchange& ex) {
  const config::DavExtLockZone& zone = *ex.settings().dav_ext.lock_zone;
  const http::Header* h = ex.req.find("Lock-Token");
  zone.table->unlock(ex.req.path, h != nullptr ? lock_token_value(h->value) : 0, now_s());
  dav::respond(ex, 204);
}

}  // namespace torii::dav_ext
