// The request fields that carry lock tokens, read as the dav-ext module
// reads them: "Lock-Token: <urn:XXXXXXXX>" (UNLOCK) and the If header's
// lists (RFC 4918 10.4), where the first "<urn:XXXXXXXX>" of a list whose
// tag covers the URI is the token offered. Tokens are 32 bits written as
// eight hex digits; 0 means none. Pure functions of their input, fuzzed
// in fuzz/dav_lock_headers_fuzz.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace torii::dav_ext {

// Who the request was sent to, for URLs in If tags and Destination: the
// request's host (lower case, no port) and whether it came over TLS.
struct Origin {
  std::string_view host;
  bool tls = false;
};

// "/path" as it is, or "http[s]://HOST[:port]/path" of this origin reduced
// to "/path"; nullopt for anything else.
std::optional<std::string_view> local_path(std::string_view url, const Origin& origin);

// The token of a Lock-Token value, 0 when it is not "<urn:" eight hex
// digits and ">".
uint32_t lock_token_value(std::string_view value);

// The token an If header offers for `uri`: untagged lists apply to
// `request_uri`, tagged ones to their tag; a list applies when its
// resource is `uri` or a folder above it. "Not" conditions and entity
// tags are passed over.
uint32_t if_header_token(std::string_view value, std::string_view request_uri, std::string_view uri,
                         const Origin& origin);

// "<urn:XXXXXXXX>" (with the brackets) or "urn:XXXXXXXX".
void append_token(std::string& out, uint32_t token, bool brackets);

}  // namespace torii::dav_ext
