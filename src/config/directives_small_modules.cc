// Directives of two small nginx modules: split_clients {}
// (ngx_http_split_clients_module, modules/split_clients) and empty_gif
// (ngx_http_empty_gif_module, modules/empty_gif).
#include "config/directives.h"
#include "modules/split_clients/split_clients.h"

namespace torii::config {

namespace {

Status set_empty_gif(Compiler&, Scope& s, const Node&) {
  s.settings->empty_gif = true;
  return Ok{};
}

constexpr DirectiveSpec kSmallModuleDirectives[] = {
    // The block's lines are its parts, checked by its setter; kUpstream
    // leaves a block's children to it.
    {"split_clients", kHttp, kArgs2 | kBlock, false, false, kUpstream, &split_clients::set_split_clients},
    {"empty_gif", kLocation, kArgs0, true, false, kMain, &set_empty_gif},
};

}  // namespace

std::span<const DirectiveSpec> small_module_directives() { return kSmallModuleDirectives; }

}  // namespace torii::config
