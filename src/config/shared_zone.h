// "zone=NAME:SIZE" of the *_zone directives (limit_req_zone,
// limit_conn_zone, in http and stream): the name and the size, with
// nginx's words for a bad one and its smallest size (8 pages).
#pragma once

#include <cstddef>
#include <string_view>

#include "config/ast.h"
#include "core/result.h"

namespace torii::config {

inline constexpr size_t kMinSharedZoneSize = 8 * 4096;

Status parse_shared_zone(const Node& n, std::string_view arg, std::string_view& name, size_t& size);

}  // namespace torii::config
