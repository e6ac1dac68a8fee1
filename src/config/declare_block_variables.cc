// nginx resolves the variables a config uses once the whole file is read,
// so an http-level line such as log_format may name a variable that a
// map {}, geo {}, split_clients {} or geoip2 {} block further down defines (server
// blocks compile after the http block's own lines, so they always could).
// Here those blocks'
// variables are declared before anything compiles, each with the slot its
// block will take: the blocks compile in file order, each kind numbered
// from 0, and that is the order counted here.
#include <algorithm>

#include "config/directives.h"
#include "config/template.h"

namespace torii::config {

namespace {

// The variable a block defines: "$name" -> "name"; empty if malformed (the
// block's own compile reports it).
std::string_view defined_name(std::string_view arg) {
  if (arg.size() < 2 || arg[0] != '$') return {};
  return arg.substr(1);
}

}  // namespace

void declare_block_variables(const std::vector<Node>& main) {
  for (const auto& http : main) {
    if (http.name != "http") continue;
    size_t maps = 0, geos = 0, splits = 0;
    std::vector<std::string_view> geoip2_names;  // a name again reuses its slot
    for (const auto& n : http.children) {
      if (n.args.empty()) continue;
      if (n.name == "map" && n.args.size() == 2) {
        if (auto name = defined_name(n.args[1]); !name.empty()) declare_variable(std::string(name), maps, VarId::map_);
        ++maps;
      } else if (n.name == "geo") {
        if (auto name = defined_name(n.args.back()); !name.empty()) declare_variable(std::string(name), geos, VarId::geo_);
        ++geos;
      } else if (n.name == "split_clients" && n.args.size() == 2) {
        if (auto name = defined_name(n.args[1]); !name.empty())
          declare_variable(std::string(name), splits, VarId::split_clients_);
        ++splits;
      } else if (n.name == "geoip2") {
        for (const auto& line : n.children) {
          if (line.name.size() < 2 || line.name[0] != '$') continue;
          const std::string_view name = std::string_view(line.name).substr(1);
          if (std::find(geoip2_names.begin(), geoip2_names.end(), name) != geoip2_names.end()) continue;
          declare_variable(std::string(name), geoip2_names.size(), VarId::geoip2_);
          geoip2_names.push_back(name);
        }
      }
    }
  }
}

}  // namespace torii::config
