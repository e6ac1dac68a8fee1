// nginx's access slot, "[user:]rw|r [group:rw|r] [all:rw|r]", read by
// dav_access and the *_store_access directives: the owner keeps rw unless a
// user: part says otherwise.
#pragma once

#include <cstdint>

#include "config/directives.h"

namespace torii::config {

Status parse_file_access(const Node& n, uint16_t& mode);

}  // namespace torii::config
