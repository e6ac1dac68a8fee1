// uwsgi to the application (uwsgi_pass): one packet of vars (the params
// and HTTP_* headers) with uwsgi_modifier1/2, the body unframed after it;
// the response as CgiStreamCodec reads it.
#pragma once

#include "handlers/cgi_stream_codec.h"

namespace torii::handlers::uwsgi {

class UwsgiCodec final : public CgiStreamCodec {
 public:
  using CgiStreamCodec::CgiStreamCodec;

  const char* scheme() const override { return "uwsgi"; }
  bool request_head(RequestBody body, int64_t length, std::string& out) override;
};

}  // namespace torii::handlers::uwsgi
