// The body length an application's head declared (Content-Length from a
// FastCGI, SCGI or uwsgi application), held to as nginx does: bytes past
// it never reach the client (a warning says so), and a body that ends
// short of it is an upstream error, so the client's response is cut
// rather than taken as whole (and an add_after_body is not appended).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "config/config.h"

namespace torii::handlers {

class DeclaredLength {
 public:
  // -1: nothing declared (or nothing to hold to: HEAD, 204, 304).
  void reset(int64_t length) {
    left_ = length;
    excess_ = false;
    noted_ = false;
  }

  // Passes on what fits of `d`; the rest is dropped.
  void pass(std::string_view d, const std::function<void(std::string_view)>& emit) {
    if (left_ < 0) {
      if (!d.empty()) emit(d);
      return;
    }
    const size_t fits = size_t(std::min<int64_t>(left_, int64_t(d.size())));
    if (fits) emit(d.substr(0, fits));
    left_ -= int64_t(fits);
    if (fits < d.size()) excess_ = true;
  }

  bool all_in() const { return left_ == 0; }
  bool short_of_it() const { return left_ > 0; }

  // nginx's warning for bytes past the length, once a response.
  bool take_excess_warning(config::LogLevel& level, std::string& line) {
    if (!excess_ || noted_) return false;
    noted_ = true;
    level = config::LogLevel::warn;
    line = "upstream sent more data than specified in \"Content-Length\" header";
    return true;
  }

 private:
  int64_t left_ = -1;
  bool excess_ = false;
  bool noted_ = false;
};

// The length to hold a response to: none for a HEAD or a status that has
// no body.
inline int64_t length_to_hold(int64_t content_length, int status, bool head_request) {
  if (head_request || status == 204 || status == 304 || status < 200) return -1;
  return content_length;
}

}  // namespace torii::handlers
