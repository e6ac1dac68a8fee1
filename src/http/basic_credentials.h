// The credentials of "Authorization: Basic base64(user:password)", as
// nginx's ngx_http_auth_basic_user reads them: the scheme in any case,
// spaces, then base64; bad base64, no ':' or an empty user is no
// credentials at all. Used by auth_basic and by $remote_user.
#pragma once

#include <string>

#include "http/request.h"

namespace torii::http {

// The decoded "user:password" and where its ':' is; the caller wipes
// `decoded` (it holds a password) when done.
struct BasicCredentials {
  std::string decoded;
  size_t colon = 0;
};

bool basic_credentials(const RequestHead& req, BasicCredentials& out);

}  // namespace torii::http
