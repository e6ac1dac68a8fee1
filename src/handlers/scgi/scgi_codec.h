// SCGI to the application (scgi_pass): the params and HTTP_* headers in
// one netstring, CONTENT_LENGTH first, the body unframed after it; the
// response as CgiStreamCodec reads it.
#pragma once

#include "handlers/cgi_stream_codec.h"

namespace torii::handlers::scgi {

class ScgiCodec final : public CgiStreamCodec {
 public:
  using CgiStreamCodec::CgiStreamCodec;

  const char* scheme() const override { return "scgi"; }
  bool request_head(RequestBody body, int64_t length, std::string& out) override;
};

}  // namespace torii::handlers::scgi
