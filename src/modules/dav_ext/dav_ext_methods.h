// The extension's methods' handlers, each in its own file; dav_ext.cc
// picks one. What they share: the request's origin, the clock.
#pragma once

#include <cstdint>

#include "modules/dav_ext/lock_headers.h"

namespace torii::http {
class Exchange;
}

namespace torii::dav_ext {

void propfind(http::Exchange& ex);  // propfind.cc
void lock(http::Exchange& ex);      // lock_methods.cc
void unlock(http::Exchange& ex);    // lock_methods.cc

Origin origin_of(const http::Exchange& ex);
// The token the request's If headers offer for `uri` (each field is read
// in turn; the first token wins).
uint32_t offered_token(const http::Exchange& ex, std::string_view uri);
int64_t now_s();

}  // namespace torii::dav_ext
