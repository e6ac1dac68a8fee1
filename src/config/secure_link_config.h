// The secure_link module's settings for one block (nginx's
// ngx_http_secure_link_module): `secure_link` and `secure_link_md5`, or
// the older `secure_link_secret`.
#pragma once

#include <string>

#include "config/template.h"

namespace torii::config {

struct SecureLinkConfig {
  // secure_link: renders "HASH[,EXPIRES]" (the hash in base64url).
  bool has_link = false;
  Template link;
  // secure_link_md5: renders the string whose MD5 the hash must be.
  bool has_md5 = false;
  Template md5;
  // secure_link_secret: the URI is /PREFIX/MD5HEX/LINK, MD5HEX = md5(LINK + secret).
  std::string secret;
};

}  // namespace torii::config
