// The WebDAV extension (the nginx-dav-ext-module, Debian's
// libnginx-mod-http-dav-ext): PROPFIND, OPTIONS, LOCK and UNLOCK on the
// files under root/alias for the methods `dav_ext_methods` names, beside
// modules/dav's PUT, DELETE, MKCOL, COPY and MOVE; and, with
// `dav_ext_lock`, the lock checks those methods pass first.
#pragma once

namespace torii::http {
class Exchange;
}

namespace torii::dav_ext {

// The precontent step (nginx's phase, before mirror and try_files): with
// a lock zone here, PUT, DELETE, MKCOL and MOVE on a locked URI, and COPY
// and MOVE onto one, need the lock's token in an If header. 0: go on;
// else the status to answer (423 without a token, 412 with another).
int check_locks(http::Exchange& ex);

// True when this location's dav_ext_methods include the request's method.
bool handles(const http::Exchange& ex);

// Answers the request (PROPFIND reads its body first and answers later).
void serve(http::Exchange& ex);

}  // namespace torii::dav_ext
