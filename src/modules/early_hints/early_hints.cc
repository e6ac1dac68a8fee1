#include "modules/early_hints/early_hints.h"

#include "config/config.h"
#include "http/exchange.h"
#include "http/variables.h"

namespace torii::early_hints {

bool wanted(http::Exchange& ex) {
  std::string value;
  for (const auto& condition : ex.settings().early_hints) {
    value.clear();
    http::render(condition, ex, value);
    if (!value.empty() && value != "0") return true;
  }
  return false;
}

}  // namespace torii::early_hints
