// The headers-more directives: more_set_headers, more_clear_headers,
// more_set_input_headers, more_clear_input_headers, each
//   [-s 'STATUS ...'] [-t 'TYPE ...'] [-a | -r] 'Name: value' | Name ...
// A block runs its enclosing blocks' rules and then its own; the messages
// for bad lines are the module's.
#include <cctype>
#include <memory>
#include <string>
#include <string_view>

#include "config/directives.h"
#include "config/headers_more_config.h"
#include "config/template.h"
#include "core/ascii.h"

namespace torii::config {

namespace {

constexpr uint16_t kHSLI = kHttp | kServer | kLocation | kLocationIf;

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Builtin response fields the module keeps apart from the others: none may
// be added beside an existing one with -a.
bool builtin_output_field(std::string_view name) {
  static constexpr std::string_view kBuiltin[] = {
      "Server", "Date", "Content-Encoding", "Location", "Refresh", "Last-Modified", "Content-Range",
      "Accept-Ranges", "WWW-Authenticate", "Expires", "E-Tag", "Content-Length", "Content-Type", "Cache-Control"};
  for (std::string_view b : kBuiltin)
    if (core::iequals(name, b)) return true;
  return false;
}

// "Name: value", "Name value" or "Name": the name runs to the first ':' or
// space, the value starts after the ':' and spaces that follow it.
Status parse_field(const Node& n, std::string_view arg, bool clear, HeadersMoreField& f) {
  size_t i = 0;
  while (i < arg.size() && is_space(arg[i])) ++i;
  const size_t start = i;
  while (i < arg.size() && arg[i] != ':' && !is_space(arg[i])) ++i;
  std::string_view name = arg.substr(start, i - start);
  if (name.empty()) return node_error(n, n.name + ": no key found in the header argument: " + std::string(arg));
  while (i < arg.size() && (arg[i] == ':' || is_space(arg[i]))) ++i;
  std::string_view value = clear ? std::string_view() : arg.substr(i);
  if (name.back() == '*') {
    if (name.size() < 2) return node_error(n, n.name + ": wildcard key too short: " + std::string(arg));
    f.wildcard = true;
    name.remove_suffix(1);
  }
  f.name = std::string(name);
  f.clear = value.empty();
  f.names_server = f.matches("Server");
  f.names_date = f.matches("Date");
  if (!f.wildcard && f.matches("Content-Type")) f.kind = HeadersMoreField::Kind::content_type;
  if (!f.wildcard && f.matches("Content-Length")) f.kind = HeadersMoreField::Kind::content_length;
  if (!f.clear) {
    auto t = compile_template(value);
    if (!t) return node_error(n, t.error());
    f.value = std::move(*t);
  }
  return Ok{};
}

Status parse_statuses(const Node& n, std::string_view list, std::vector<int>& out) {
  size_t i = 0;
  while (i < list.size()) {
    if (is_space(list[i])) {
      ++i;
      continue;
    }
    int code = 0;
    for (; i < list.size() && !is_space(list[i]); ++i) {
      if (list[i] < '0' || list[i] > '9')
        return node_error(n, n.name + ": invalid digit \"" + std::string(1, list[i]) +
                                 "\" found in the status code list \"" + std::string(list) + "\"");
      code = code * 10 + (list[i] - '0');
      if (code > 999) code = 999;
    }
    out.push_back(code);
  }
  return Ok{};
}

void parse_types(std::string_view list, std::vector<std::string>& out) {
  size_t i = 0;
  while (i < list.size()) {
    if (is_space(list[i]) || list[i] == ';') {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < list.size() && !is_space(list[i]) && list[i] != ';') ++i;
    out.emplace_back(list.substr(start, i - start));
  }
}

Status add_rule(Scope& s, const Node& n, bool input, bool clear) {
  HeadersMoreRule rule;
  rule.input = input;
  for (size_t i = 0; i < n.args.size(); ++i) {
    std::string_view a = n.args[i];
    if (a.empty()) continue;
    if (a[0] != '-') {
      HeadersMoreField f;
      if (Status st = parse_field(n, a, clear, f); !st) return st;
      rule.fields.push_back(std::move(f));
      continue;
    }
    const char option = a.size() == 2 ? a[1] : '\0';
    if (option == 's' || option == 't') {
      if (i + 1 == n.args.size()) return node_error(n, n.name + ": option -" + option + " takes an argument.");
      std::string_view list = n.args[++i];
      if (option == 't') {
        parse_types(list, rule.types);
      } else if (input) {
        return node_error(n, n.name + ": invalid option name: \"" + std::string(a) + "\"");
      } else if (Status st = parse_statuses(n, list, rule.statuses); !st) {
        return st;
      }
    } else if (option == 'a' && n.name == "more_set_headers") {
      rule.append = true;
    } else if (option == 'r' && n.name == "more_set_input_headers") {
      rule.replace_only = true;
    } else {
      return node_error(n, n.name + ": invalid option name: \"" + std::string(a) + "\"");
    }
  }
  if (rule.append)
    for (const HeadersMoreField& f : rule.fields)
      if (builtin_output_field(f.name))
        return node_error(n, n.name + ": can not append builtin headers \"" + f.name + "\"");
  if (rule.fields.empty()) return Ok{};  // options alone: nothing to do, as the module
  // Copy-on-write: a block shares its parent's rules until it adds one.
  auto c = s.settings->headers_more ? std::make_shared<HeadersMoreConfig>(*s.settings->headers_more)
                                    : std::make_shared<HeadersMoreConfig>();
  (input ? c->has_input : c->has_output) = true;
  c->rules.push_back(std::move(rule));
  s.settings->headers_more = std::move(c);
  return Ok{};
}

Status set_output(Compiler&, Scope& s, const Node& n) { return add_rule(s, n, false, false); }
Status clear_output(Compiler&, Scope& s, const Node& n) { return add_rule(s, n, false, true); }
Status set_input(Compiler&, Scope& s, const Node& n) { return add_rule(s, n, true, false); }
Status clear_input(Compiler&, Scope& s, const Node& n) { return add_rule(s, n, true, true); }

constexpr DirectiveSpec kHeadersMoreDirectives[] = {
    {"more_set_headers", kHSLI, kArgs1More, false, false, kMain, &set_output},
    {"more_clear_headers", kHSLI, kArgs1More, false, false, kMain, &clear_output},
    {"more_set_input_headers", kHSLI, kArgs1More, false, false, kMain, &set_input},
    {"more_clear_input_headers", kHSLI, kArgs1More, false, false, kMain, &clear_input},
};

}  // namespace

std::span<const DirectiveSpec> headers_more_directives() { return kHeadersMoreDirectives; }

}  // namespace torii::config
