#include "config/file_access.h"

namespace torii::config {

Status parse_file_access(const Node& n, uint16_t& mode) {
  if (n.args.size() > 3) return node_error(n, "invalid number of arguments in \"" + n.name + "\" directive");
  uint16_t bits = 0;
  uint16_t user = 0600;
  for (const std::string& a : n.args) {
    std::string_view v = a;
    int shift = 0;
    if (v.starts_with("user:")) {
      shift = 6;
      user = 0;
      v.remove_prefix(5);
    } else if (v.starts_with("group:")) {
      shift = 3;
      v.remove_prefix(6);
    } else if (v.starts_with("all:")) {
      v.remove_prefix(4);
    } else {
      return node_error(n, "invalid value \"" + a + "\"");
    }
    if (v == "rw") {
      bits |= static_cast<uint16_t>(6 << shift);
    } else if (v == "r") {
      bits |= static_cast<uint16_t>(4 << shift);
    } else {
      return node_error(n, "invalid value \"" + a + "\"");
    }
  }
  mode = bits | user;
  return Ok{};
}

}  // namespace torii::config
