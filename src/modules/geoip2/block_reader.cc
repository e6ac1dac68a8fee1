#include "modules/geoip2/block_reader.h"

#include "core/quote.h"
#include "modules/geoip2/database.h"

namespace torii::geoip2 {

namespace {

using config::Node;
using config::node_error;

// The module compares the start of the word only ("build_epochs" reads
// as build_epoch); a name it does not know is not found when read.
Metadata metadata_named(std::string_view word) {
  if (word.starts_with("build_epoch")) return Metadata::build_epoch;
  if (word.starts_with("last_check")) return Metadata::last_check;
  if (word.starts_with("last_change")) return Metadata::last_change;
  return Metadata::none;
}

// `$name [default=V] [source=$v] KEY...` or `$name metadata WHAT`.
Status read_variable(const Node& d, const std::shared_ptr<Database>& db, Lookup& l) {
  l.name = d.name.substr(1);
  if (l.name.empty()) return node_error(d, "invalid variable name " + q(d.name));
  l.database = db;
  if (!d.args.empty() && d.args[0] == "metadata") {
    l.is_metadata = true;
    // Without a word after "metadata" the variable is never found (the
    // module would read past its arguments).
    if (d.args.size() > 1) l.metadata = metadata_named(d.args[1]);
    return Ok{};
  }
  const std::string var = "$" + l.name;
  bool has_default = false;
  size_t i = 0;
  // Settings come first, each with an '='; the first word without one
  // starts the path (later '=' words are keys).
  for (; i < d.args.size() && d.args[i].find('=') != std::string::npos; ++i) {
    const std::string& a = d.args[i];
    if (a.size() > 8 && a.starts_with("default=")) {
      if (has_default) return node_error(d, "default has already been declared for  " + q(var));
      l.default_value = a.substr(8);
      has_default = true;
    } else if (a.size() > 7 && a.starts_with("source=")) {
      if (!l.source.empty()) return node_error(d, "source has already been declared for  " + q(var));
      l.source = a.substr(7);
      if (l.source[0] != '$') return node_error(d, "invalid source variable name " + q(l.source));
    } else {
      return node_error(d, "invalid setting " + q(a) + " for " + q(var));
    }
  }
  l.path.assign(d.args.begin() + static_cast<std::ptrdiff_t>(i), d.args.end());
  return Ok{};
}

Status read_auto_reload(const Node& d, Database& db) {
  if (d.args.size() != 1) return node_error(d, "invalid number of arguments for auto_reload");
  int64_t ms = 0;
  // A time in seconds: milliseconds are no unit here, as nginx's
  // ngx_parse_time for seconds.
  if (d.args[0].find("ms") != std::string::npos || !config::parse_time_ms(d.args[0], ms) || ms < 0)
    return node_error(d, "invalid interval for auto_reload " + q(d.args[0]));
  db.set_check_interval(ms / 1000);
  return Ok{};
}

}  // namespace

Status read_geoip2_block(config::Compiler& c, const Node& n, std::vector<std::shared_ptr<Database>>& opened,
                         std::vector<Lookup>& variables) {
  const std::string path = !n.args[0].empty() && n.args[0][0] == '/' ? n.args[0] : c.full_path(n.args[0]);
  for (const auto& db : opened)
    if (db->path() == path) return node_error(n, "Duplicate GeoIP2 mmdb - " + path);
  auto db = Database::open(path);
  if (!db) return node_error(n, db.error());
  opened.push_back(*db);
  for (const Node& d : n.children) {
    if (d.block) return node_error(d, "unexpected \"{\"");
    if (!d.name.empty() && d.name[0] == '$') {
      Lookup l;
      if (auto st = read_variable(d, *db, l); !st) return st;
      variables.push_back(std::move(l));
      continue;
    }
    if (d.name == "auto_reload") {
      if (auto st = read_auto_reload(d, **db); !st) return st;
      continue;
    }
    return node_error(d, "invalid setting " + q(d.name));
  }
  return Ok{};
}

}  // namespace torii::geoip2
