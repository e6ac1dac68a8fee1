// nginx directives that torii does not implement yet, accepted when they
// are set to nginx's default value: that value asks for what torii does
// anyway (`ssl_stapling off`, `ssl_verify_client off`, `autoindex off`),
// and configs spell defaults out all the time. Any other value is refused
// with "... is not yet supported", as before. The table is searched after
// every module's own, so a directive that gets implemented simply wins.
#include <array>
#include <initializer_list>

#include "config/directives.h"
#include "config/nginx_directives.h"

namespace torii::config {

namespace {

enum class Kind : uint8_t {
  word,      // compared as written
  size,      // "2m" == "2048k"
  time,      // "1h" == "60m" == "3600"
  any_size,  // a hash table's size: torii keeps no such table, every size means the same
};

struct DefaultOnly {
  std::string_view name;
  uint16_t contexts;
  Kind kind;
  // Each accepted value, its arguments separated by single spaces; two
  // when nginx's default depends on the platform.
  std::array<std::string_view, 3> values;
};

constexpr uint16_t kHSL = kHttp | kServer | kLocation;
constexpr uint16_t kHS = kHttp | kServer;

constexpr DefaultOnly kDefaults[] = {
    // http core
    {"server_names_hash_max_size", kHttp, Kind::any_size, {}},
    {"server_names_hash_bucket_size", kHttp, Kind::any_size, {}},
    {"variables_hash_max_size", kHttp, Kind::any_size, {}},
    {"variables_hash_bucket_size", kHttp, Kind::any_size, {}},
    // ssl
    {"ssl_ocsp", kHS, Kind::word, {"off"}},
    {"ssl_ocsp_cache", kHS, Kind::word, {"off"}},
    // proxy
    {"proxy_headers_hash_max_size", kHSL, Kind::any_size, {}},
    {"proxy_headers_hash_bucket_size", kHSL, Kind::any_size, {}},
};

std::string joined(const Node& n) {
  std::string out;
  for (const auto& a : n.args) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

bool same_arg(Kind kind, std::string_view given, std::string_view wanted) {
  if (given == wanted) return true;
  int64_t a = 0, b = 0;
  switch (kind) {
    case Kind::size:
      return parse_size(given, a) && parse_size(wanted, b) && a == b;
    case Kind::time:
      return parse_time_ms(given, a) && parse_time_ms(wanted, b) && a == b;
    default:
      return false;
  }
}

// `value` holds the arguments separated by single spaces.
bool is_value(const DefaultOnly& d, const Node& n, std::string_view value) {
  size_t i = 0;
  while (!value.empty()) {
    const size_t space = value.find(' ');
    const std::string_view arg = value.substr(0, space);
    if (i >= n.args.size() || !same_arg(d.kind, n.args[i], arg)) return false;
    ++i;
    value = space == std::string_view::npos ? std::string_view{} : value.substr(space + 1);
  }
  return i == n.args.size();
}

const DefaultOnly* find_default(std::string_view name) {
  for (const auto& d : kDefaults)
    if (d.name == name) return &d;
  return nullptr;
}

Status accept_default(Compiler&, Scope&, const Node& n) {
  const DefaultOnly* d = find_default(n.name);
  if (!d) return node_error(n, "unknown directive \"" + n.name + "\"");
  if (d->kind == Kind::any_size) {
    int64_t v = 0;
    if (n.args.size() == 1 && parse_size(n.args[0], v)) return Ok{};
    return node_error(n, "invalid value \"" + joined(n) + "\" in \"" + n.name + "\" directive");
  }
  for (std::string_view value : d->values)
    if (!value.empty() && is_value(*d, n, value)) return Ok{};  // nginx's default: what torii does
  std::string message = "\"" + n.name + " " + joined(n) + "\" is not yet supported";
  if (const auto module = nginx_module_of(n.name); !module.empty()) message += " (" + std::string(module) + ")";
  return node_error(n, message);
}

constexpr std::array<DirectiveSpec, std::size(kDefaults)> make_specs() {
  std::array<DirectiveSpec, std::size(kDefaults)> specs{};
  for (size_t i = 0; i < std::size(kDefaults); ++i)
    specs[i] = {kDefaults[i].name, kDefaults[i].contexts, kArgs1More, true, false, kMain, &accept_default};
  return specs;
}

constexpr auto kSpecs = make_specs();

}  // namespace

std::span<const DirectiveSpec> default_only_directives() { return kSpecs; }

}  // namespace torii::config
