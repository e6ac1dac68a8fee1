// PROPFIND as the dav-ext module answers it: the body read whole (in
// memory: one past client_body_buffer_size is the module's 500), the
// Depth 0 (the default) or 1 (infinity is refused with 403), then a 207
// with one response per resource: the URI's own, and with Depth 1 each
// entry of its folder but the hidden ones, in the folder's order.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/xml_escape.h"
#include "handlers/request_body_buffer.h"
#include "http/date.h"
#include "http/document_root.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/pipeline.h"
#include "http/whole_body.h"
#include "log/error_log.h"
#include "modules/dav/dav_request.h"
#include "modules/dav_ext/dav_ext_methods.h"
#include "modules/dav_ext/lock_xml.h"
#include "modules/dav_ext/propfind_body.h"

namespace torii::dav_ext {

namespace {

using http::Exchange;

struct Resource {
  std::string uri;   // decoded; a member folder's ends in '/'
  std::string name;  // displayname
  bool dir = false;
  int64_t mtime = 0;
  int64_t size = 0;
  std::optional<Lock> lock;
};

struct DirCloser {
  void operator()(DIR* d) const { closedir(d); }
};

// The URI's last segment ("/" for the root), without a trailing slash.
std::string last_segment(std::string_view uri) {
  if (uri.size() < 2) return std::string(uri);
  if (uri.back() == '/') uri.remove_suffix(1);
  return std::string(uri.substr(uri.rfind('/') + 1));
}

Resource resource_of(std::string uri, std::string name, const struct stat& st) {
  Resource r;
  r.uri = std::move(uri);
  r.name = std::move(name);
  r.dir = S_ISDIR(st.st_mode);
  r.mtime = st.st_mtime;
  r.size = st.st_size;
  return r;
}

// The folder's members but the hidden ones; 0 or the status to answer.
int list_members(const Exchange& ex, const std::string& dir, std::vector<Resource>& out) {
  std::unique_ptr<DIR, DirCloser> d(opendir(dir.c_str()));
  if (!d) {
    TORII_LOG_EX(ex, crit, "opendir() \"%s\" failed (%d: %s)%s", dir.c_str(), errno, strerror(errno),
                 http::log_context(ex).c_str());
    return 500;
  }
  const std::string& base = ex.req.path;
  const bool slash = !base.empty() && base.back() == '/';
  while (dirent* de = readdir(d.get())) {
    if (de->d_name[0] == '.') continue;
    struct stat st;
    if (fstatat(dirfd(d.get()), de->d_name, &st, 0) != 0) {
      TORII_LOG_EX(ex, crit, "stat() \"%s/%s\" failed (%d: %s)%s", dir.c_str(), de->d_name, errno, strerror(errno),
                   http::log_context(ex).c_str());
      return 500;
    }
    std::string uri = base;
    if (!slash) uri += '/';
    uri += de->d_name;
    if (S_ISDIR(st.st_mode)) uri += '/';
    out.push_back(resource_of(std::move(uri), de->d_name, st));
  }
  return 0;
}

void append_property_names(std::string& out) {
  out += "<D:displayname/>\n<D:getcontentlength/>\n<D:getlastmodified/>\n";
  out += "<D:resourcetype/>\n<D:lockdiscovery/>\n<D:supportedlock/>\n";
}

void append_properties(std::string& out, const Resource& r, uint8_t props, bool locking, int64_t now) {
  if (props & displayname) {
    out += "<D:displayname>";
    core::append_xml_escaped(out, r.name);
    out += "</D:displayname>\n";
  }
  if ((props & getcontentlength) && !r.dir)
    out += "<D:getcontentlength>" + std::to_string(r.size) + "</D:getcontentlength>\n";
  if (props & getlastmodified) out += "<D:getlastmodified>" + http::format_http_date(r.mtime) + "</D:getlastmodified>\n";
  if (props & resourcetype) out += r.dir ? "<D:resourcetype><D:collection/></D:resourcetype>\n" : "<D:resourcetype></D:resourcetype>\n";
  if (props & lockdiscovery) append_lockdiscovery(out, r.lock ? &*r.lock : nullptr, now);
  if (props & supportedlock) {
    out += "<D:supportedlock>\n";
    if (locking) {
      out += "<D:lockentry>\n<D:lockscope><D:exclusive/></D:lockscope>\n";
      out += "<D:locktype><D:write/></D:locktype>\n</D:lockentry>\n";
    }
    out += "</D:supportedlock>\n";
  }
}

// Every resource's properties in one 200 propstat: the module leaves out
// the ones it does not know rather than listing them as 404.
std::string multistatus(const std::vector<Resource>& resources, uint8_t props, bool locking, int64_t now) {
  std::string out(kXmlDeclaration);
  out += "<D:multistatus xmlns:D=\"DAV:\">\n";
  for (const Resource& r : resources) {
    out += "<D:response>\n<D:href>";
    core::append_xml_escaped(out, dav::escape_uri(r.uri));
    out += "</D:href>\n<D:propstat>\n<D:prop>\n";
    if (props & names_only) {
      append_property_names(out);
    } else {
      append_properties(out, r, props, locking, now);
    }
    out += "</D:prop>\n<D:status>HTTP/1.1 200 OK</D:status>\n</D:propstat>\n</D:response>\n";
  }
  out += "</D:multistatus>\n";
  return out;
}

// 0 with the body's text, or the status that refuses it.
int body_text(const Exchange& ex, std::string_view& text) {
  const handlers::RequestBodyBuffer* body = ex.request_body.get();
  if (body == nullptr) return 0;
  if (body->in_file()) {
    TORII_LOG_EX(ex, error, "PROPFIND client body is in file, you may want to increase client_body_buffer_size%s",
                 http::log_context(ex).c_str());
    return 500;
  }
  text = body->memory();
  return 0;
}

int answer(Exchange& ex) {
  std::string_view text;
  if (int st = body_text(ex, text)) return st;
  const std::optional<uint8_t> props = parse_propfind_body(text);
  if (!props) {
    TORII_LOG_EX(ex, error, "PROPFIND body is not well-formed XML%s", http::log_context(ex).c_str());
    return 400;
  }
  const int depth = dav::depth(ex, 0);
  if (depth == dav::kInvalidDepth) return 400;
  // RFC 4918 9.1: a server may refuse an infinite PROPFIND; the module does.
  if (depth == dav::kInfinityDepth) return 403;
  std::string path;
  if (!http::map_uri_to_path(ex, ex.req.path, path)) return 404;
  if (path.size() > 1 && path.back() == '/') path.pop_back();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 404;
  std::vector<Resource> resources;
  resources.push_back(resource_of(ex.req.path, last_segment(ex.req.path), st));
  if (depth == 1 && resources[0].dir) {
    if (int failed = list_members(ex, path, resources)) return failed;
  }
  const config::DavExtLockZone* zone = ex.settings().dav_ext.lock_zone.get();
  const int64_t now = now_s();
  if (zone != nullptr && zone->table) {
    for (Resource& r : resources) r.lock = zone->table->find(r.uri, Reach::none, now);
  }
  std::string body = multistatus(resources, *props, zone != nullptr, now);
  http::ResponseHead head;
  head.status = 207;
  head.add("Content-Type", "text/xml; charset=utf-8");
  head.content_length = int64_t(body.size());
  ex.send_head(std::move(head));
  ex.send_body(body);
  ex.finish();
  return 0;
}

void answer_or_refuse(Exchange& ex) {
  if (int st = answer(ex)) http::send_error(ex, st);
}

}  // namespace

void propfind(Exchange& ex) {
  // A body read already (client_body_early_read, mirror_request_body) is
  // in ex.request_body; else it is read here, client_max_body_size judged.
  if (ex.has_body() && !ex.request_body) {
    http::read_whole_body(ex, &answer_or_refuse);
    return;
  }
  answer_or_refuse(ex);
}

}  // namespace torii::dav_ext
