#include "handlers/symlink_policy.h"

#include "http/exchange.h"
#include "http/variables.h"

namespace torii::handlers {

SymlinkPolicy symlink_policy(const http::Exchange& ex, const std::string& path) {
  const config::DisableSymlinks& d = ex.settings().disable_symlinks;
  if (d.mode == config::DisableSymlinks::Mode::off) return {};
  const auto mode = d.mode == config::DisableSymlinks::Mode::on ? SymlinkPolicy::Mode::on
                                                                  : SymlinkPolicy::Mode::if_not_owner;
  return symlink_policy_for(mode, d.from ? http::render(*d.from, ex) : std::string(), path);
}

}  // namespace torii::handlers
