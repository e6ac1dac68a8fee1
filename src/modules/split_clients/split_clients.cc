#include "modules/split_clients/split_clients.h"
#include "core/quote.h"

#include <cstdlib>
#include <memory>

#include "http/exchange.h"
#include "http/variables.h"

namespace torii::split_clients {

namespace {

using config::Node;
using config::node_error;

// nginx's ngx_atofp(text, 2): a decimal with at most two digits after the
// point, in hundredths; -1 when malformed.
int64_t parse_hundredths(std::string_view s) {
  if (s.empty()) return -1;
  int64_t value = 0;
  int point = 2;
  bool dot = false;
  for (char c : s) {
    if (point == 0) return -1;
    if (c == '.') {
      if (dot) return -1;
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') return -1;
    if (value > 100'000'000) return -1;
    value = value * 10 + (c - '0');
    if (dot) --point;
  }
  while (point-- > 0) value *= 10;
  return value;
}

}  // namespace

uint32_t murmur_hash2(std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t len = data.size();
  uint32_t h = static_cast<uint32_t>(len);
  while (len >= 4) {
    uint32_t k = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
    k *= 0x5bd1e995;
    k ^= k >> 24;
    k *= 0x5bd1e995;
    h *= 0x5bd1e995;
    h ^= k;
    p += 4;
    len -= 4;
  }
  switch (len) {
    case 3:
      h ^= uint32_t(p[2]) << 16;
      [[fallthrough]];
    case 2:
      h ^= uint32_t(p[1]) << 8;
      [[fallthrough]];
    case 1:
      h ^= p[0];
      h *= 0x5bd1e995;
  }
  h ^= h >> 13;
  h *= 0x5bd1e995;
  h ^= h >> 15;
  return h;
}

Status read_split_parts(const Node& n, std::vector<config::SplitClientsConfig::Part>& parts) {
  // Each line is "PERCENT% VALUE" or "* VALUE".
  std::vector<uint32_t> percents;
  for (const auto& line : n.children) {
    if (line.args.size() != 1 || !line.children.empty())
      return node_error(line, "invalid number of arguments in \"split_clients\" directive");
    uint32_t percent = 0;
    if (line.name != "*") {
      const int64_t v = line.name.size() > 1 && line.name.back() == '%'
                            ? parse_hundredths(std::string_view(line.name).substr(0, line.name.size() - 1))
                            : -1;
      if (v <= 0) return node_error(line, "invalid percent value " + q(line.name));
      percent = static_cast<uint32_t>(std::min<int64_t>(v, UINT32_MAX));
    }
    percents.push_back(percent);
    parts.push_back({0, line.args[0]});
  }
  // nginx's arithmetic: running bounds over the 32-bit hash space; the
  // line that reaches 100% (or "*") takes the rest.
  uint32_t sum = 0, last = 0;
  for (size_t i = 0; i < percents.size(); ++i) {
    sum = percents[i] ? sum + percents[i] : 10000;
    if (sum == 10000) percents[i] = 0;
    if (sum > 10000) return node_error(n, "percent total is greater than 100%");
    if (percents[i]) {
      last += static_cast<uint32_t>(uint64_t(percents[i]) * uint64_t(0xffffffff) / 10000);
      parts[i].bound = last;
    }
  }
  return Ok{};
}

Status set_split_clients(config::Compiler& c, config::Scope&, const Node& n) {
  if (n.args.size() != 2) return node_error(n, "invalid number of arguments in \"split_clients\" directive");
  auto sc = std::make_shared<config::SplitClientsConfig>();
  auto key = config::compile_template(n.args[0]);
  if (!key) return node_error(n, key.error());
  sc->key = std::move(*key);
  const std::string& var = n.args[1];
  if (var.size() < 2 || var[0] != '$') return node_error(n, "invalid variable name " + q(var));
  sc->name = var.substr(1);
  if (config::variable_taken(sc->name)) return node_error(n, "the duplicate " + q(sc->name) + " variable");

  if (auto st = read_split_parts(n, sc->parts); !st) return st;
  auto& all = c.cfg().split_clients;
  config::define_variable(sc->name, all.size(), config::VarId::split_clients_);
  all.push_back(std::move(sc));
  return Ok{};
}

bool append_value(const http::Exchange& ex, const std::string& arg, std::string& out) {
  const size_t index = std::strtoul(arg.c_str(), nullptr, 10);
  if (!ex.config || index >= ex.config->split_clients.size()) return false;
  const config::SplitClientsConfig& sc = *ex.config->split_clients[index];
  if (const std::string* value = pick_split_part(sc.parts, http::render(sc.key, ex))) out.append(*value);
  return true;  // beyond every part: empty, as nginx's null value
}

const std::string* pick_split_part(const std::vector<config::SplitClientsConfig::Part>& parts, std::string_view key) {
  const uint32_t hash = murmur_hash2(key);
  for (const auto& part : parts)
    if (hash < part.bound || part.bound == 0) return &part.value;
  return nullptr;
}

}  // namespace torii::split_clients
