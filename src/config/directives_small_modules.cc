// Directives of small nginx modules: split_clients {}
// (ngx_http_split_clients_module, modules/split_clients), empty_gif
// (ngx_http_empty_gif_module, modules/empty_gif) and random_index
// (ngx_http_random_index_module, modules/random_index).
#include "config/directives.h"
#include "modules/split_clients/split_clients.h"

namespace torii::config {

namespace {

Status set_empty_gif(Compiler&, Scope& s, const Node&) {
  s.settings->empty_gif = true;
  return Ok{};
}

Status set_random_index(Compiler&, Scope& s, const Node& n) {
  s.settings->random_index = n.args[0] == "on";
  return Ok{};
}

constexpr DirectiveSpec kSmallModuleDirectives[] = {
    // The block's lines are its parts, checked by its setter; kUpstream
    // leaves a block's children to it.
    {"split_clients", kHttp, kArgs2 | kBlock, false, false, kUpstream, &split_clients::set_split_clients},
    {"empty_gif", kLocation, kArgs0, true, false, kMain, &set_empty_gif},
    {"random_index", kLocation, kFlag, true, false, kMain, &set_random_index},
};

}  // namespace

std::span<const DirectiveSpec> small_module_directives() { return kSmallModuleDirectives; }

}  // namespace torii::config
