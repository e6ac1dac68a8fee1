// The rewrite module's directives of one server or location (return,
// rewrite, set, if, break), compiled at load into a flat list of steps in
// the order written. An `if` is a step that skips its body when false, so
// the body's steps sit inline, as nginx lays out its script.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "config/config.h"
#include "config/regex.h"
#include "config/template.h"

namespace torii::rewrite {

struct Condition {
  enum class Kind : uint8_t {
    value,      // if ($var): true unless empty or "0"
    equal,      // = / != (negate)
    regex,      // ~ ~* / !~ !~* (negate); captures on a match
    file,       // -f / !-f
    directory,  // -d / !-d
    exists,     // -e / !-e
    executable, // -x / !-x
  };
  Kind kind = Kind::value;
  bool negate = false;
  config::Template subject;  // the variable, or the path of a file test
  config::Template operand;  // equal: the string compared with
  std::shared_ptr<config::Regex> regex;
  std::string text;          // as written, for rewrite_log lines
};

struct SetStep {
  uint32_t slot = 0;  // Config::variables
  bool args = false;  // `set $args ...` changes the request's arguments
  bool limit_rate = false;  // `set $limit_rate ...` changes the response's pace
  config::Template value;
};

struct IfStep {
  Condition condition;
  uint32_t body = 0;  // steps in the body: skipped when the condition is false
  // Location-level: the block's settings, used from here on when true.
  std::shared_ptr<const config::Location> settings;
};

struct RewriteStep {
  enum class Flag : uint8_t { none, last, break_, redirect, permanent };
  std::shared_ptr<config::Regex> regex;
  config::Template path;  // the replacement up to its first '?' (all of it for a redirect)
  config::Template args;  // after the '?'
  bool has_args = false;  // the replacement has a '?'
  bool add_args = true;   // no trailing '?': the request's arguments are appended
  bool redirect = false;  // answer 301/302 with Location instead of changing the URI
  int status = 0;         // 301 or 302 for a redirect
  bool stop = false;      // a flag was given: the program ends after a match
  bool break_cycle = false;  // `break`: no new location search
};

struct ReturnStep {
  config::Return ret;
};

struct BreakStep {};

using Step = std::variant<SetStep, IfStep, RewriteStep, ReturnStep, BreakStep>;

struct Program {
  std::vector<Step> steps;
};

}  // namespace torii::rewrite
