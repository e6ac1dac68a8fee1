// Directives of small nginx modules: split_clients {}
// (ngx_http_split_clients_module, modules/split_clients).
#include "config/directives.h"
#include "modules/split_clients/split_clients.h"

namespace torii::config {

namespace {

constexpr DirectiveSpec kSmallModuleDirectives[] = {
    // The block's lines are its parts, checked by its setter; kUpstream
    // leaves a block's children to it.
    {"split_clients", kHttp, kArgs2 | kBlock, false, false, kUpstream, &split_clients::set_split_clients},
};

}  // namespace

std::span<const DirectiveSpec> small_module_directives() { return kSmallModuleDirectives; }

}  // namespace torii::config
