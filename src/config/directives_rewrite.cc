// The rewrite module's directives: return, rewrite, set, if, break,
// rewrite_log, uninitialized_variable_warn. return/rewrite/set/if/break
// append steps, in the order written, to the program of their server or
// location (modules/rewrite/program.h); a location without them has none.
#include <algorithm>
#include <string>

#include "config/directives.h"
#include "core/quote.h"
#include "config/regex.h"
#include "modules/rewrite/program.h"

namespace torii::config {

namespace {

using rewrite::Condition;
using rewrite::Program;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool is_url(std::string_view s) {
  return starts_with(s, "http://") || starts_with(s, "https://") || starts_with(s, "$scheme");
}

Result<Template> template_arg(const Node& n, std::string_view text) {
  auto t = compile_template(text);
  if (!t) return node_error(n, t.error());
  return t;
}

// The program of the block being compiled, made on its first step.
Program& program_of(Scope& s) {
  if (!s.program) {
    s.program = std::make_shared<Program>();
    if (s.ctx == kServer) {
      s.server->rewrite = s.program;
    } else {
      s.settings->rewrite = s.program;
    }
  }
  return *s.program;
}

Status set_return(Compiler&, Scope& s, const Node& n) {
  Return r;
  uint64_t code = 0;
  if (n.args.size() == 1 && is_url(n.args[0])) {
    r.code = 302;
    auto t = template_arg(n, n.args[0]);
    if (!t) return Error{t.error()};
    r.text = std::move(*t);
    r.has_text = true;
  } else {
    if (!parse_number(n.args[0], code) || code > 999)
      return node_error(n, "invalid return code " + q(n.args[0]));
    r.code = static_cast<int>(code);
    if (n.args.size() == 2) {
      auto t = template_arg(n, n.args[1]);
      if (!t) return Error{t.error()};
      r.text = std::move(*t);
      r.has_text = true;
    }
  }
  program_of(s).steps.emplace_back(rewrite::ReturnStep{std::move(r)});
  return Ok{};
}

Status set_break(Compiler&, Scope& s, const Node&) {
  program_of(s).steps.emplace_back(rewrite::BreakStep{});
  return Ok{};
}

Status set_set(Compiler&, Scope& s, const Node& n) {
  std::string_view name = n.args[0];
  if (name.size() < 2 || name[0] != '$') return node_error(n, "invalid variable name " + q(name));
  name.remove_prefix(1);
  rewrite::SetStep step;
  if (name == "args") {
    step.args = true;
  } else if (name == "limit_rate") {
    step.limit_rate = true;  // the response's pace (modules/limit_rate)
  } else {
    Variable v;
    if (!lookup_variable(name, v) || !settable_slot(v, step.slot))
      return node_error(n, "the duplicate " + q(name) + " variable");  // defined up front, see below
  }
  auto t = template_arg(n, n.args[1]);
  if (!t) return Error{t.error()};
  step.value = std::move(*t);
  program_of(s).steps.emplace_back(std::move(step));
  return Ok{};
}

Status set_rewrite(Compiler&, Scope& s, const Node& n) {
  rewrite::RewriteStep step;
  std::string replacement = n.args[1];
  if (replacement.empty()) return node_error(n, "empty replacement");
  auto re = Regex::compile(n.args[0], false);
  if (!re) return node_error(n, re.error());
  step.regex = std::move(*re);
  if (replacement.back() == '?') {
    // A last "?" drops the request's arguments.
    replacement.pop_back();
    step.add_args = false;
  }
  if (is_url(replacement)) {
    step.redirect = true;
    step.status = 302;
    step.stop = true;
  }
  if (n.args.size() == 3) {
    const std::string& flag = n.args[2];
    step.stop = true;
    if (flag == "last") {
    } else if (flag == "break") {
      step.break_cycle = true;
    } else if (flag == "redirect") {
      step.redirect = true;
      step.status = 302;
    } else if (flag == "permanent") {
      step.redirect = true;
      step.status = 301;
    } else {
      return node_error(n, "invalid parameter " + q(flag));
    }
  }
  // A new URI splits at its first '?' into path and arguments; a redirect
  // keeps the '?' in its Location and appends the arguments after a '&'.
  size_t qm = replacement.find('?');
  step.has_args = qm != std::string::npos;
  std::string_view path = replacement;
  if (step.has_args && !step.redirect) {
    path = std::string_view(replacement).substr(0, qm);
    auto args = template_arg(n, std::string_view(replacement).substr(qm + 1));
    if (!args) return Error{args.error()};
    step.args = std::move(*args);
  }
  auto t = template_arg(n, path);
  if (!t) return Error{t.error()};
  step.path = std::move(*t);
  program_of(s).steps.emplace_back(std::move(step));
  return Ok{};
}

// nginx's condition syntax: "(" and ")" may stand alone or stick to the
// first and last words: `if ($a)`, `if ( $a = b )`, `if ($a ~* "x")`.
Result<Condition> parse_condition(const Node& n) {
  std::vector<std::string_view> w(n.args.begin(), n.args.end());
  auto invalid = [&](std::string_view what) { return node_error(n, "invalid condition " + q(what)); };
  if (w.front().empty() || w.front()[0] != '(') return invalid(w.front());
  if (w.front().size() == 1) {
    w.erase(w.begin());
  } else {
    w.front().remove_prefix(1);
  }
  if (w.empty() || w.back().empty() || w.back().back() != ')') return invalid(n.args.back());
  if (w.back().size() == 1) {
    w.pop_back();
  } else {
    w.back().remove_suffix(1);
  }
  if (w.empty()) return invalid(n.args.front());

  Condition c;
  for (size_t i = 0; i < w.size(); ++i) c.text += (i ? " " : "") + std::string(w[i]);
  std::string_view first = w[0];
  if (first.size() > 1 && first[0] == '$') {
    if (w.size() != 1 && w.size() != 3) return invalid(first);
    auto subject = template_arg(n, first);
    if (!subject) return Error{subject.error()};
    if (subject->parts.size() != 1 || !subject->parts[0].is_variable) return invalid(first);
    c.subject = std::move(*subject);
    if (w.size() == 1) {
      c.kind = Condition::Kind::value;
      return c;
    }
    std::string_view op = w[1];
    if (op == "=" || op == "!=") {
      c.kind = Condition::Kind::equal;
      c.negate = op == "!=";
      auto operand = template_arg(n, w[2]);
      if (!operand) return Error{operand.error()};
      c.operand = std::move(*operand);
      return c;
    }
    if (op == "~" || op == "~*" || op == "!~" || op == "!~*") {
      c.kind = Condition::Kind::regex;
      c.negate = op[0] == '!';
      auto re = Regex::compile(w[2], op.back() == '*');
      if (!re) return node_error(n, re.error());
      c.regex = std::move(*re);
      return c;
    }
    return node_error(n, "unexpected " + q(op) + " in condition");
  }
  if ((first.size() == 2 && first[0] == '-') || (first.size() == 3 && first[0] == '!' && first[1] == '-')) {
    if (w.size() != 2) return invalid(first);
    c.negate = first[0] == '!';
    switch (first.back()) {
      case 'f': c.kind = Condition::Kind::file; break;
      case 'd': c.kind = Condition::Kind::directory; break;
      case 'e': c.kind = Condition::Kind::exists; break;
      case 'x': c.kind = Condition::Kind::executable; break;
      default: return invalid(first);
    }
    auto path = template_arg(n, w[1]);
    if (!path) return Error{path.error()};
    c.subject = std::move(*path);
    return c;
  }
  return invalid(first);
}

bool is_step_directive(std::string_view name) {
  return name == "return" || name == "rewrite" || name == "set" || name == "break";
}

// `if`: the condition and the body's steps go inline into the block's
// program now, so they keep their place among the block's other steps. In
// a location, the body's other directives (add_header, proxy_pass, root...)
// make the block's own settings, which start from the location's complete
// settings, as nginx merges an `if` like a nested location; they are
// compiled once the location's plain directives have run.
Status set_if(Compiler& c, Scope& s, const Node& n) {
  auto cond = parse_condition(n);
  if (!cond) return Error{cond.error()};
  Program& program = program_of(s);
  std::shared_ptr<Program> shared = s.program;
  size_t at = program.steps.size();
  program.steps.emplace_back(rewrite::IfStep{std::move(*cond), 0, nullptr});

  std::vector<Node> steps;
  std::vector<Node> settings;
  for (const auto& child : n.children) (is_step_directive(child.name) ? steps : settings).push_back(child);

  Scope body;
  body.ctx = s.ctx == kServer ? kServerIf : kLocationIf;
  body.program = shared;
  auto st = c.block(steps, body);
  if (!st) return st;
  std::get<rewrite::IfStep>(program.steps[at]).body = static_cast<uint32_t>(program.steps.size() - at - 1);

  if (s.ctx == kServer) return Ok{};  // rewrite_log and the like: nothing else to set here
  const Location* outer = s.location;
  LocationSettings* outer_settings = s.settings;
  const Node* node = &n;
  s.after_plain.push_back([&c, shared, at, outer, outer_settings, node, settings = std::move(settings)]() -> Status {
    auto loc = std::make_shared<Location>();
    if (outer) {
      loc->match = outer->match;
      loc->pattern = outer->pattern;
      loc->regex = outer->regex;
    }
    loc->file = node->file ? *node->file : std::string();
    loc->line = node->line;
    loc->is_if = true;
    loc->settings = *outer_settings;
    // What nginx does not merge into an `if` block: its steps belong to the
    // location's program, try_files and limit_except to the location.
    loc->settings.rewrite.reset();
    loc->settings.try_files.clear();
    loc->settings.limit_except.reset();
    Scope inner;
    inner.ctx = kLocationIf;
    inner.settings = &loc->settings;
    inner.location = loc.get();
    auto st = c.block(settings, inner);
    if (!st) return st;
    std::get<rewrite::IfStep>(shared->steps[at]).settings = std::move(loc);
    return Ok{};
  });
  return Ok{};
}

Status set_rewrite_log(Compiler&, Scope& s, const Node& n) {
  if (s.settings) s.settings->rewrite_log = n.args[0] == "on";
  return Ok{};
}

Status set_uninitialized_warn(Compiler&, Scope& s, const Node& n) {
  if (s.settings) s.settings->uninitialized_variable_warn = n.args[0] == "on";
  return Ok{};
}

constexpr uint16_t kSteps = kServer | kLocation | kServerIf | kLocationIf;

const DirectiveSpec kRewriteDirectives[] = {
    {"return", kSteps, kArgs1 | kArgs2, false, false, kMain, &set_return},
    {"rewrite", kSteps, kArgs2 | kArgs3, false, false, kMain, &set_rewrite},
    {"set", kSteps, kArgs2, false, false, kMain, &set_set},
    {"break", kSteps, kArgs0, false, false, kMain, &set_break},
    {"if", kServer | kLocation, kArgs1More | kBlock, false, false, kLocationIf, &set_if},
    {"rewrite_log", kHttp | kSteps, kFlag, true, false, kMain, &set_rewrite_log},
    {"uninitialized_variable_warn", kHttp | kSteps, kFlag, true, false, kMain, &set_uninitialized_warn},
};

// The names a pattern gives its groups: (?<name>...), (?'name'...), (?P<name>...).
void define_named_groups(std::string_view pattern) {
  for (size_t i = 0; i + 3 < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      ++i;
      continue;
    }
    if (pattern[i] != '(' || pattern[i + 1] != '?') continue;
    size_t p = i + 2;
    if (pattern[p] == 'P') ++p;
    if (p >= pattern.size() || (pattern[p] != '<' && pattern[p] != '\'')) continue;
    char close = pattern[p] == '<' ? '>' : '\'';
    size_t end = pattern.find(close, p + 1);
    if (end == std::string_view::npos || end == p + 1) continue;
    std::string_view name = pattern.substr(p + 1, end - p - 1);
    if (name.find_first_of("=!") != std::string_view::npos) continue;  // look-behind, not a name
    define_user_variable(name);
  }
}

}  // namespace

std::span<const DirectiveSpec> rewrite_directives() { return kRewriteDirectives; }

Status define_rewrite_variables(const std::vector<Node>& nodes) {
  for (const auto& n : nodes) {
    if ((n.name == "set" || n.name == "auth_request_set") && !n.args.empty()) {
      std::string_view name = n.args[0];
      if (name.size() < 2 || name[0] != '$') return node_error(n, "invalid variable name " + q(name));
      name.remove_prefix(1);
      if (name == "args" || name == "limit_rate") continue;
      if (is_builtin_variable(name)) return node_error(n, "the duplicate " + q(name) + " variable");
      define_user_variable(name);
    } else if (n.name == "rewrite" && !n.args.empty()) {
      define_named_groups(n.args[0]);
    } else if (n.name == "location" || n.name == "if" || n.name == "server_name") {
      for (const auto& a : n.args) define_named_groups(a);
    }
    auto st = define_rewrite_variables(n.children);
    if (!st) return st;
  }
  return Ok{};
}

}  // namespace torii::config
