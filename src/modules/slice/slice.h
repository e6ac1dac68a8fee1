// slice (nginx's ngx_http_slice_module): a location with `slice SIZE`
// fetches its response in parts of SIZE bytes, one request per part run
// through the location's content handler with $slice_range set to that
// part ("bytes=START-END"), so that with
//
//   proxy_cache_key $uri$is_args$args$slice_range;
//   proxy_set_header Range $slice_range;
//   proxy_cache_valid 200 206 1h;
//
// a large file is cached part by part and a range request fetches only the
// parts it touches. The parts must be 206s that agree (Content-Range,
// ETag); the client gets one 200 of the whole (or 206 of its one range),
// assembled in order. A first part that is not a 206 is passed on as it is.
#pragma once

namespace torii::http {
class Exchange;
}

namespace torii::slice {

// Answers `ex` from its parts (the exchange's handler state drives them).
void serve(http::Exchange& ex);

}  // namespace torii::slice
