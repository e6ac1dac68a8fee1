#include "modules/geo/geo_compiler.h"
#include "core/quote.h"

#include <arpa/inet.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "config/geo_config.h"

namespace torii::geo {

namespace {

using config::Node;
using config::node_error;

Key key_of(const uint8_t* bytes, size_t n) {
  Key k = 0;
  for (size_t i = 0; i < n; ++i) k = k << 8 | bytes[i];
  return k;
}

// The networks of a block before they are painted: later lines replace
// earlier ones for the same network, `delete` removes one.
struct NetworkKey {
  int family;
  int bits;
  Key addr;
  bool operator<(const NetworkKey& o) const {
    return std::tie(family, bits, addr) < std::tie(o.family, o.bits, o.addr);
  }
};

class GeoBuilder {
 public:
  GeoBuilder(config::Compiler& c, config::GeoConfig& g, bool http) : c_(c), g_(g), http_(http) {}

  Status line(const Node& d) {
    if (d.block) return node_error(d, "unexpected \"{\"");
    if (d.args.empty()) {
      if (d.name == "ranges") {
        if (!networks_.empty() || painted_ranges_) 
          return node_error(d, "the \"ranges\" directive must be the first directive inside \"geo\" block");
        ranges_ = true;
        g_.ranges = true;
        return Ok{};
      }
      if (http_ && d.name == "proxy_recursive") {
        g_.proxy_recursive = true;
        return Ok{};
      }
      if (d.name == "volatile") return Ok{};
    }
    if (d.args.size() != 1) return node_error(d, "invalid number of the geo parameters");
    const std::string& arg = d.args[0];
    if (http_ && d.name == "proxy") {
      net::Cidr cidr;
      auto r = net::parse_cidr(arg, cidr);
      if (r == net::CidrParse::invalid || cidr.family == AF_UNIX) return node_error(d, "invalid network " + q(arg));
      if (r == net::CidrParse::low_bits_set) c_.warn(d, "low address bits of " + q(arg) + " are meaningless");
      g_.proxies.push_back(cidr);
      return Ok{};
    }
    if (d.name == "default") {
      if (has_default_)
        c_.warn(d, std::string("duplicate default geo ") + (ranges_ ? "range " : "") + "value: " + q(arg) +
                       ", old value: " + q(g_.default_value));
      g_.default_value = arg;
      has_default_ = true;
      return Ok{};
    }
    bool del = d.name == "delete";
    const std::string& net = del ? arg : d.name;
    return ranges_ ? range(d, net, del ? nullptr : &arg) : network(d, net, del ? nullptr : &arg);
  }

  void finish() {
    // Widest networks first, so a narrower one painted later wins inside it.
    std::vector<std::pair<NetworkKey, int32_t>> sorted(networks_.begin(), networks_.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.first.bits < b.first.bits; });
    for (const auto& [k, v] : sorted) {
      const int width = k.family == AF_INET ? 32 : 128;
      Key span = k.bits == 0 ? ~Key(0) : ((Key(1) << (width - k.bits)) - 1);
      if (width == 32 && k.bits == 0) span = 0xffffffffu;
      (k.family == AF_INET ? g_.v4 : g_.v6).paint(k.addr, k.addr + span, v);
    }
    g_.v4.freeze();
    g_.v6.freeze();
  }

 private:
  int32_t value_index(const std::string& v) {
    auto it = value_ids_.find(v);
    if (it != value_ids_.end()) return it->second;
    g_.values.push_back(v);
    int32_t id = static_cast<int32_t>(g_.values.size() - 1);
    value_ids_.emplace(v, id);
    return id;
  }

  Status network(const Node& d, const std::string& text, const std::string* value) {
    net::Cidr cidr;
    auto r = net::parse_cidr(text, cidr);
    if (r == net::CidrParse::invalid || cidr.family == AF_UNIX) return node_error(d, "invalid network " + q(text));
    if (r == net::CidrParse::low_bits_set) c_.warn(d, "low address bits of " + q(text) + " are meaningless");
    NetworkKey k{cidr.family, cidr.bits, key_of(cidr.addr, cidr.family == AF_INET ? 4 : 16)};
    if (!value) {
      if (networks_.erase(k) == 0) c_.warn(d, "no network " + q(text) + " to delete");
      return Ok{};
    }
    auto it = networks_.find(k);
    if (it != networks_.end()) {
      c_.warn(d, "duplicate network " + q(text) + ", value: " + q(*value) + ", old value: " +
                     q(g_.values[static_cast<size_t>(it->second)]));
    }
    networks_[k] = value_index(*value);
    return Ok{};
  }

  // "192.0.2.1-192.0.2.99" (IPv4 only, as in nginx).
  Status range(const Node& d, const std::string& text, const std::string* value) {
    size_t dash = text.find('-');
    in_addr lo{}, hi{};
    if (dash == std::string::npos || inet_pton(AF_INET, text.substr(0, dash).c_str(), &lo) != 1 ||
        inet_pton(AF_INET, text.substr(dash + 1).c_str(), &hi) != 1 || ntohl(lo.s_addr) > ntohl(hi.s_addr))
      return node_error(d, "invalid range " + q(text));
    painted_ranges_ = true;
    g_.v4.paint(ntohl(lo.s_addr), ntohl(hi.s_addr), value ? value_index(*value) : RangeTable::kNone);
    return Ok{};
  }

  config::Compiler& c_;
  config::GeoConfig& g_;
  bool http_;
  bool ranges_ = false;
  bool painted_ranges_ = false;
  bool has_default_ = false;
  std::map<NetworkKey, int32_t> networks_;
  std::map<std::string, int32_t> value_ids_;
};

}  // namespace

Status read_geo_block(config::Compiler& c, const Node& n, config::GeoConfig& g, bool http) {
  GeoBuilder b(c, g, http);
  for (const auto& d : n.children) {
    auto st = b.line(d);
    if (!st) return st;
  }
  b.finish();
  return Ok{};
}

Status set_geo(config::Compiler& c, config::Scope&, const Node& n) {
  auto g = std::make_shared<config::GeoConfig>();
  const std::string& var = n.args.back();
  if (var.size() < 2 || var[0] != '$') return node_error(n, "invalid variable name " + q(var));
  g->name = var.substr(1);
  if (n.args.size() == 2) {
    const std::string& src = n.args[0];
    if (src.size() < 2 || src[0] != '$') return node_error(n, "invalid variable name " + q(src));
    auto t = config::compile_template(src);
    if (!t) return node_error(n, t.error());
    g->source = std::move(*t);
    g->has_source = true;
  }
  if (config::variable_taken(g->name)) return node_error(n, "the duplicate " + q(g->name) + " variable");
  if (auto st = read_geo_block(c, n, *g, true); !st) return st;
  auto& geos = c.cfg().geos;
  config::define_variable(g->name, geos.size(), config::VarId::geo_);
  geos.push_back(std::move(g));
  return Ok{};
}

}  // namespace torii::geo
