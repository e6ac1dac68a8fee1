// The disable_symlinks policy a request's location gives a path: what the
// static handler and the rewrite module's file tests open it under.
#pragma once

#include <string>

#include "handlers/symlink_walk.h"

namespace torii::http {
class Exchange;
}

namespace torii::handlers {

// The location's mode, with its from= rendered for this request.
SymlinkPolicy symlink_policy(const http::Exchange& ex, const std::string& path);

}  // namespace torii::handlers
