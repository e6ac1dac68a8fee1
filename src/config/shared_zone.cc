#include "config/shared_zone.h"

#include <string>

#include "config/directives.h"

namespace torii::config {

Status parse_shared_zone(const Node& n, std::string_view arg, std::string_view& name, size_t& size) {
  const std::string quoted = "\"" + std::string(arg) + "\"";
  std::string_view v = arg.substr(5);  // after "zone="
  const size_t colon = v.find(':');
  if (colon == std::string_view::npos) return node_error(n, "invalid zone size " + quoted);
  int64_t bytes = 0;
  if (!parse_size(v.substr(colon + 1), bytes)) return node_error(n, "invalid zone size " + quoted);
  if (bytes < int64_t(kMinSharedZoneSize)) return node_error(n, "zone " + quoted + " is too small");
  name = v.substr(0, colon);
  size = size_t(bytes);
  return Ok{};
}

}  // namespace torii::config
