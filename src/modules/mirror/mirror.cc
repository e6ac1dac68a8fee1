#include "modules/mirror/mirror.h"

#include "config/mirror_config.h"
#include "http/body_replay.h"
#include "http/exchange.h"
#include "http/pipeline.h"
#include "http/whole_body.h"
#include "modules/mirror/mirrors.h"

namespace torii::mirror {

namespace {

void start_mirrors(http::Exchange& ex, const config::MirrorConfig& m) {
  mirror::Mirrors* mirrors = ex.services().mirrors;
  if (!mirrors) return;
  const http::BodyReplay* body = m.request_body ? dynamic_cast<const http::BodyReplay*>(ex.body_source.get()) : nullptr;
  for (const auto& uri : m.uris) mirrors->start(ex, uri, body);
}

}  // namespace

Gate run(http::Exchange& ex) {
  const config::MirrorConfig* m = ex.settings().mirror.get();
  // Mirrors are the client's request's own (nginx's r->main): not an auth
  // subrequest's, a slice part's or a mirror's.
  if (!m || m->uris.empty() || ex.access.subrequest || ex.background || !ex.services().loop) return Gate::proceed;
  if (m->request_body && ex.has_body() && !ex.body_source) {
    // The body is read whole first; the request goes on at the content
    // handler, with no second mirror. `m` is the location's, kept alive
    // by ex.config.
    http::read_whole_body(ex, [m](http::Exchange& e) {
      start_mirrors(e, *m);
      http::resume_request(e, http::Phase::mirrored);
    });
    return Gate::wait;
  }
  start_mirrors(ex, *m);
  return Gate::proceed;
}

}  // namespace torii::mirror
