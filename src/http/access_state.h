// What the preaccess and access modules (limit_req, limit_conn,
// limit_rate, auth_basic, auth_request) decided for one request, kept in
// its Exchange for their variables and for what must end with it.
#pragma once

#include <cstdint>
#include <memory>

namespace torii::http {

// Something held for the request's whole life (a limit_conn count), let
// go when the exchange is destroyed: nginx's pool cleanup.
struct RequestCleanup {
  virtual ~RequestCleanup() = default;
  std::unique_ptr<RequestCleanup> next;
};

struct AccessState {
  // $limit_req_status / $limit_conn_status: 0 while the module has not
  // decided; else 1 + the index in its names (PASSED, DELAYED...).
  uint8_t limit_req_status = 0;
  uint8_t limit_conn_status = 0;
  // $limit_rate as `set` or the upstream's X-Accel-Limit-Rate left it;
  // -1: the location's limit_rate.
  int64_t limit_rate = -1;
  // The bytes sent before that rate applies when a handler set it
  // (mp4_limit_rate_after); -1: the location's limit_rate_after.
  int64_t limit_rate_after = -1;
  // An auth_request subrequest: it skips the access phase, as nginx's.
  bool subrequest = false;
  std::unique_ptr<RequestCleanup> cleanups;

  void add_cleanup(std::unique_ptr<RequestCleanup> c) {
    c->next = std::move(cleanups);
    cleanups = std::move(c);
  }
};

}  // namespace torii::http
