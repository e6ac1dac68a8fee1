#include "modules/dav_ext/dav_ext.h"

#include <ctime>
#include <string_view>

#include "config/config.h"
#include "core/ascii.h"
#include "http/exchange.h"
#include "http/pipeline.h"
#include "http/special_response.h"
#include "modules/dav_ext/dav_ext_methods.h"
#include "modules/dav_ext/lock_table.h"

namespace torii::dav_ext {

namespace {

using config::DavExtSettings;
using http::Exchange;
using http::Method;

uint8_t method_bit(Method m) {
  switch (m) {
    case Method::propfind:
      return DavExtSettings::propfind;
    case Method::options:
      return DavExtSettings::options;
    case Method::lock:
      return DavExtSettings::lock;
    case Method::unlock:
      return DavExtSettings::unlock;
    default:
      return 0;
  }
}

// OPTIONS: the class of WebDAV spoken (2 with locks) and the module's
// fixed list of methods, whatever this location allows.
void options(Exchange& ex) {
  http::ResponseHead head;
  head.status = 200;
  head.add("DAV", ex.settings().dav_ext.lock_zone ? "2" : "1");
  head.add("Allow", "GET,HEAD,PUT,DELETE,MKCOL,COPY,MOVE,PROPFIND,OPTIONS,LOCK,UNLOCK");
  head.content_length = 0;
  ex.send_head(std::move(head));
  ex.finish();
}

}  // namespace

Origin origin_of(const Exchange& ex) { return Origin{ex.req.host, ex.conn().tls}; }

uint32_t offered_token(const Exchange& ex, std::string_view uri) {
  const Origin origin = origin_of(ex);
  for (const http::Header& h : ex.req.headers) {
    if (!core::iequals(h.name, "If")) continue;
    if (uint32_t t = if_header_token(h.value, ex.req.path, uri, origin)) return t;
  }
  return 0;
}

int64_t now_s() { return int64_t(std::time(nullptr)); }

int check_locks(Exchange& ex) {
  const config::DavExtLockZone* zone = ex.settings().dav_ext.lock_zone.get();
  if (zone == nullptr || !zone->table) return 0;
  const Method m = ex.req.method;
  if (m == Method::put || m == Method::del || m == Method::mkcol || m == Method::move) {
    const std::string_view uri = ex.req.path;
    const bool drop_root = m == Method::del || m == Method::move;
    if (int st = zone->table->verify(uri, offered_token(ex, uri), drop_root, now_s())) return st;
  }
  if (m == Method::move || m == Method::copy) {
    // The Destination as sent (not decoded), as the module compares it;
    // one that is not this server's is left to the copy to refuse.
    const http::Header* dest = ex.req.find("Destination");
    if (dest == nullptr || dest->value.empty()) return 0;
    const auto path = local_path(dest->value, origin_of(ex));
    if (!path) return 0;
    return zone->table->verify(*path, offered_token(ex, *path), false, now_s());
  }
  return 0;
}

bool handles(const Exchange& ex) {
  const uint8_t bit = method_bit(ex.req.method);
  return bit != 0 && (ex.settings().dav_ext.methods & bit) != 0;
}

void serve(Exchange& ex) {
  switch (ex.req.method) {
    case Method::propfind:
      propfind(ex);
      return;
    case Method::options:
      options(ex);
      return;
    case Method::lock:
    case Method::unlock:
      // Without a zone the module refuses both (405), whatever the methods.
      if (!ex.settings().dav_ext.lock_zone) {
        http::send_error(ex, 405);
        return;
      }
      ex.req.method == Method::lock ? lock(ex) : unlock(ex);
      return;
    default:
      http::send_error(ex, 405);
      return;
  }
}

}  // namespace torii::dav_ext
