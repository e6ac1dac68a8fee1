// The split_clients module (nginx's ngx_http_split_clients_module): a
// variable whose value is picked by the MurmurHash2 of a string (the
// client's address, say) against percentages, so that the same string
// always lands in the same part, the same part as with nginx.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/directives.h"
#include "config/split_clients_config.h"

namespace torii::http {
class Exchange;
}

namespace torii::split_clients {

// nginx's ngx_murmur_hash2 (MurmurHash2 with seed 0, little-endian reads).
uint32_t murmur_hash2(std::string_view data);

// The block's lines ("PERCENT% VALUE" or "* VALUE") into parts with
// nginx's bounds over the 32-bit hash space; stream's split_clients reads
// them too.
Status read_split_parts(const config::Node& n, std::vector<config::SplitClientsConfig::Part>& parts);

// The value for `key` (its MurmurHash2 against the bounds); null beyond
// every part (nginx's empty value).
const std::string* pick_split_part(const std::vector<config::SplitClientsConfig::Part>& parts, std::string_view key);

// The `split_clients` block: compiles it into Config::split_clients and
// defines its variable.
Status set_split_clients(config::Compiler& c, config::Scope& s, const config::Node& n);

// $name of split_clients block `arg` (its index in Config::split_clients).
bool append_value(const http::Exchange& ex, const std::string& arg, std::string& out);

}  // namespace torii::split_clients
