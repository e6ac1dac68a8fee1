#include "handlers/proxy_rewrite_rule.h"

#include <strings.h>

#include "config/regex.h"
#include "http/exchange.h"
#include "http/variables.h"
#include "modules/rewrite/runner.h"

namespace torii::handlers {

bool apply_rewrite_rule(http::Exchange& ex, const config::ProxyRedirect& rule, RuleMatch how, std::string& value) {
  if (rule.regex) {
    // As nginx: the match's captures replace the request's, and the
    // replacement stands for the whole value.
    config::Captures captures;
    if (!rule.regex->match(value, &captures)) return false;
    ex.captures = std::move(captures);
    if (!rule.regex->named().empty()) rewrite::assign_named_captures(*rule.regex, ex);
    value = http::render(rule.to, ex);
    return true;
  }
  const std::string from = http::render(rule.from, ex);
  if (how == RuleMatch::domain) {
    const size_t dot = !value.empty() && value[0] == '.' ? 1 : 0;  // ".example.com" keeps its dot
    if (value.size() - dot != from.size() || strncasecmp(value.data() + dot, from.data(), from.size()) != 0)
      return false;
    value = value.substr(0, dot) + http::render(rule.to, ex);
    return true;
  }
  if (from.empty() || value.compare(0, from.size(), from) != 0) return false;
  value = http::render(rule.to, ex) + value.substr(from.size());
  return true;
}

}  // namespace torii::handlers
