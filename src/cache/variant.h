// Vary: which stored response a request may get. The request's values of
// the fields an entry's Vary names are hashed into its variant; a request
// whose variant differs from the stored one's looks under a second key,
// the key with that variant, so each variant is kept apart.
#pragma once

#include <string>
#include <string_view>

#include "cache/entry_file.h"

namespace torii::http {
class Exchange;
}

namespace torii::cache {

Md5 variant_of(const http::Exchange& ex, std::string_view vary);
Md5 variant_md5(const std::string& key, const Md5& variant);

}  // namespace torii::cache
