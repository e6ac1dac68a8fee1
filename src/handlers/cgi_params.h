// What a gateway application is told about the request (FastCGI PARAMS,
// uwsgi vars): the *_param list in order (an "if_not_empty" one left out
// when it renders empty), then, with *_pass_request_headers on, every
// request header as HTTP_NAME (upper-case, '-' as '_') unless a param of
// that name was set, as nginx does.
#pragma once

#include <string_view>

#include "config/cgi_config.h"

namespace torii::http {
class Exchange;
}

namespace torii::handlers {

class CgiParamSink {
 public:
  virtual void add(std::string_view name, std::string_view value) = 0;
  virtual ~CgiParamSink() = default;
};

void build_cgi_params(const http::Exchange& ex, const config::CgiConfig& cfg, CgiParamSink& sink);

}  // namespace torii::handlers
