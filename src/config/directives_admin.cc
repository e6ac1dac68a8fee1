// The admin API's directives: admin_listen and admin_token_file (http),
// api (location, NGINX Plus's name and write= parameter), and `state FILE`
// inside upstream {}, whose server lines the API keeps up to date.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "config/directives.h"
#include "core/quote.h"
#include "config/parser.h"
#include "config/upstream_config.h"

namespace torii::config {

namespace {

bool mentions(const std::vector<Node>& nodes, std::string_view name) {
  for (const auto& n : nodes)
    if (n.name == name || mentions(n.children, name)) return true;
  return false;
}

Node make_node(const Node& at, std::string name, std::vector<std::string> args) {
  Node n;
  n.name = std::move(name);
  n.args = std::move(args);
  n.file = at.file;
  n.line = at.line;
  return n;
}

// admin_listen and admin_token_file do their work in add_admin_server and
// the token's setter; the table only checks contexts and arity.
Status accept_admin_listen(Compiler&, Scope&, const Node&) { return Ok{}; }

Status set_admin_token_file(Compiler& c, Scope&, const Node& n) {
  auto text = read_file(c.full_path(n.args[0]));
  if (!text) return node_error(n, text.error());
  std::string token = *text;
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ' || token.back() == '\t'))
    token.pop_back();
  if (token.empty()) return node_error(n, "the token file " + q(n.args[0]) + " is empty");
  for (unsigned char ch : token)
    if (ch <= 0x20 || ch >= 0x7f) return node_error(n, "the token in " + q(n.args[0]) + " must be one printable word");
  c.cfg().admin_token = std::move(token);
  return Ok{};
}

Status set_api(Compiler& c, Scope& s, const Node& n) {
  s.settings->api = LocationSettings::Api::read_only;  // NGINX Plus's default: write=off
  if (n.args.size() == 1) {
    if (n.args[0] == "write=on") {
      s.settings->api = LocationSettings::Api::read_write;
    } else if (n.args[0] != "write=off") {
      return node_error(n, "invalid parameter " + q(n.args[0]));
    }
  }
  c.cfg().api_enabled = true;
  return Ok{};
}

constexpr DirectiveSpec kAdminDirectives[] = {
    {"admin_listen", kHttp, kArgs1, true, false, kMain, &accept_admin_listen},
    {"admin_token_file", kHttp, kArgs1, true, false, kMain, &set_admin_token_file},
    {"api", kLocation, kArgs0 | kArgs1, true, false, kMain, &set_api},
};

}  // namespace

std::span<const DirectiveSpec> admin_directives() { return kAdminDirectives; }

Status add_admin_server(Compiler& c, std::vector<Node>& http_children) {
  // Known before the upstream blocks compile: their groups then get what
  // the API changes (upstream::LiveGroup).
  if (mentions(http_children, "api") || mentions(http_children, "admin_listen")) c.cfg().api_enabled = true;
  const Node* listen = nullptr;
  bool token = false;
  for (const auto& n : http_children) {
    if (n.name == "admin_listen") listen = &n;
    if (n.name == "admin_token_file") token = true;
  }
  if (!listen) return Ok{};
  if (!token) return node_error(*listen, "\"admin_listen\" needs \"admin_token_file\": the API changes the upstreams");
  // server { listen ADDR; location /api/ { api write=on; } }
  Node api = make_node(*listen, "api", {"write=on"});
  Node location = make_node(*listen, "location", {"/api/"});
  location.block = true;
  location.children.push_back(std::move(api));
  Node server = make_node(*listen, "server", {});
  server.block = true;
  server.children.push_back(make_node(*listen, "listen", {listen->args[0]}));
  server.children.push_back(std::move(location));
  http_children.push_back(std::move(server));
  return Ok{};
}

Status read_state_file(Compiler& c, UpstreamGroupConfig& g, const Node& n) {
  g.state_file = c.full_path(n.args[0]);
  struct stat st{};
  if (::stat(g.state_file.c_str(), &st) != 0) {
    if (errno == ENOENT) return Ok{};  // written at the first change
    return node_error(n, "stat() " + q(g.state_file) + " failed (" + std::to_string(errno) + ": " + std::strerror(errno) + ")");
  }
  auto text = read_file(g.state_file);
  if (!text) return node_error(n, text.error());
  Parser parser("", nullptr, /*allow_include=*/false);
  auto nodes = parser.parse_text(g.state_file, *text);
  if (!nodes) return Error{nodes.error()};
  for (const auto& line : *nodes) {
    if (line.name != "server" || line.block) return node_error(line, "only \"server\" lines may be in a state file");
    auto added = upstream_server(g, line);
    if (!added) return added;
  }
  return Ok{};
}

}  // namespace torii::config
