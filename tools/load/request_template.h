// The requests torii-load sends, built once before the run: whole HTTP/1.1
// requests as bytes, and HTTP/2 and HTTP/3 header lists that point into stable storage,
// so that sending a request copies or references them and builds nothing.
#pragma once

#include <nghttp2/nghttp2.h>
#include <nghttp3/nghttp3.h>

#include <deque>
#include <string>
#include <vector>

#include "load/options.h"

namespace torii::load {

struct RequestTemplates {
  RequestTemplates() = default;
  RequestTemplates(RequestTemplates&&) = default;  // the storage moves, its bytes stay
  RequestTemplates(const RequestTemplates&) = delete;
  RequestTemplates& operator=(const RequestTemplates&) = delete;

  std::vector<std::string> h1;                // one request per URL
  std::vector<std::vector<nghttp2_nv>> h2;    // one header list per URL
  std::vector<std::vector<nghttp3_nv>> h3;    // the same lists for nghttp3
  std::vector<std::string> hq;                // HTTP/0.9 request lines (--hq)
  std::string body;
  bool head_request = false;                  // HEAD: responses have no body

 private:
  friend RequestTemplates build_templates(const Options& options, std::string body);
  std::deque<std::string> storage_;  // the bytes the nghttp2_nv point to
};

RequestTemplates build_templates(const Options& options, std::string body);

}  // namespace torii::load
