// The XML the lock methods and PROPFIND share: a lockdiscovery property
// (RFC 4918 15.8) for a resource's lock, or an empty one.
#pragma once

#include <cstdint>
#include <string>

#include "modules/dav_ext/lock_table.h"

namespace torii::dav_ext {

inline constexpr std::string_view kXmlDeclaration = "<?xml version=\"1.0\" encoding=\"utf-8\" ?>\n";

// <D:lockdiscovery/>, or its activelock: type, scope, depth, the seconds
// left from `now`, the token and the root.
void append_lockdiscovery(std::string& out, const Lock* lock, int64_t now);

}  // namespace torii::dav_ext
