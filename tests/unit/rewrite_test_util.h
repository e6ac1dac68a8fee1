// Test helper: the `return` a block's rewrite program holds, if any.
#pragma once

#include <memory>
#include <variant>

#include "modules/rewrite/program.h"

namespace torii::config {

inline const Return* first_return(const std::shared_ptr<const rewrite::Program>& p) {
  if (!p) return nullptr;
  for (const auto& s : p->steps)
    if (const auto* r = std::get_if<rewrite::ReturnStep>(&s)) return &r->ret;
  return nullptr;
}

}  // namespace torii::config
