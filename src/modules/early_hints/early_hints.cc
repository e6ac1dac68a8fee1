#include "modules/early_hints/early_hints.h"

#include "config/config.h"
#include "http/exchange.h"
#include "http/variables.h"

namespace torii::early_hints {

bool wanted(http::Exchange& ex) { return http::any_true(ex.settings().early_hints, ex); }

}  // namespace torii::early_hints
