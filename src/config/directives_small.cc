// Small core and module directives with nginx's meaning, each a line or
// two: settings that change a detail of a response or of a connection.
#include "config/directives.h"

namespace torii::config {

namespace {

constexpr DirectiveSpec kSmallDirectives[] = {
    {"", 0, 0, false, false, kMain, nullptr},
};

}  // namespace

std::span<const DirectiveSpec> small_directives() { return std::span(kSmallDirectives).subspan(1); }

}  // namespace torii::config
