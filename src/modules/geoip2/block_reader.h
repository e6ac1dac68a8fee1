// Reads a `geoip2 FILE { ... }` block (http or stream): opens the file and
// turns its lines into variables. What a variable's source= names is
// compiled by the caller, with its own variables.
#pragma once

#include <memory>
#include <vector>

#include "config/directives.h"
#include "modules/geoip2/lookup.h"

namespace torii::geoip2 {

class Database;

// `opened`: the block's level's databases so far (a file may appear once);
// this block's is added. Each `$name ...` line becomes one Lookup of
// `variables`, in the block's order. Errors are the module's words.
Status read_geoip2_block(config::Compiler& c, const config::Node& n, std::vector<std::shared_ptr<Database>>& opened,
                         std::vector<Lookup>& variables);

}  // namespace torii::geoip2
