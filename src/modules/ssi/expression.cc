#include "modules/ssi/expression.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <memory>

#include "core/html_escape.h"

namespace torii::ssi {

namespace {

bool name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c | 0x20);
  return out;
}

// A compiled pattern, compiled per use as nginx's SSI does (the pattern
// may hold variables).
struct Code {
  pcre2_code* code = nullptr;
  ~Code() {
    if (code) pcre2_code_free(code);
  }
};
struct MatchData {
  pcre2_match_data* data = nullptr;
  ~MatchData() {
    if (data) pcre2_match_data_free(data);
  }
};

bool regex_match(const std::string& pattern, std::string_view subject, bool& matched, Match& match,
                 std::string& error) {
  int code = 0;
  PCRE2_SIZE offset = 0;
  Code re;
  re.code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), 0, &code, &offset, nullptr);
  if (!re.code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(code, msg, sizeof msg);
    error = "pcre2_compile() failed: " + std::string(reinterpret_cast<const char*>(msg)) + " in \"" + pattern +
            "\" at \"" + pattern.substr(std::min<size_t>(offset, pattern.size())) + "\"";
    return false;
  }
  MatchData md;
  md.data = pcre2_match_data_create_from_pattern(re.code, nullptr);
  if (!md.data) {
    error = "pcre2_match_data_create_from_pattern() failed";
    return false;
  }
  const int rc = pcre2_match(re.code, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), 0, 0, md.data,
                             nullptr);
  if (rc == PCRE2_ERROR_NOMATCH) {
    matched = false;
    return true;
  }
  if (rc < 0) {
    error = "pcre2_match() failed: " + std::to_string(rc) + " on \"" + std::string(subject) + "\" using \"" +
            pattern + "\"";
    return false;
  }
  matched = true;
  const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.data);
  auto group = [&](uint32_t i) -> std::string {
    if (ov[2 * i] == PCRE2_UNSET || ov[2 * i] > subject.size()) return {};
    return std::string(subject.substr(ov[2 * i], ov[2 * i + 1] - ov[2 * i]));
  };
  match.groups.clear();
  match.named.clear();
  for (int i = 0; i < rc; ++i) match.groups.push_back(group(uint32_t(i)));
  uint32_t count = 0, entry = 0;
  PCRE2_SPTR table = nullptr;
  pcre2_pattern_info(re.code, PCRE2_INFO_NAMECOUNT, &count);
  pcre2_pattern_info(re.code, PCRE2_INFO_NAMEENTRYSIZE, &entry);
  pcre2_pattern_info(re.code, PCRE2_INFO_NAMETABLE, &table);
  for (uint32_t i = 0; i < count; ++i) {
    const PCRE2_SPTR e = table + i * entry;
    const uint32_t n = (uint32_t(e[0]) << 8) | e[1];
    match.named.emplace_back(lower(reinterpret_cast<const char*>(e + 2)),
                             n < uint32_t(rc) ? group(n) : std::string());
  }
  return true;
}

}  // namespace

bool evaluate(std::string_view text, const Lookup& lookup, std::string& out, std::string& error) {
  out.clear();
  size_t i = 0;
  bool quoted = false;
  while (i < text.size()) {
    const char c = text[i];
    if (quoted) {
      quoted = false;
      if (c != '\\' && c != '\'' && c != '"' && c != '$') out.push_back('\\');
      out.push_back(c);
      ++i;
      continue;
    }
    if (c == '\\') {
      quoted = true;
      ++i;
      continue;
    }
    if (c != '$') {
      out.push_back(c);
      ++i;
      continue;
    }
    // A variable: $name or ${name}.
    ++i;
    const bool bracket = i < text.size() && text[i] == '{';
    if (bracket) ++i;
    const size_t start = i;
    while (i < text.size() && name_char(text[i])) ++i;
    const std::string_view name = text.substr(start, i - start);
    if (bracket) {
      if (i >= text.size() || text[i] != '}') {
        error = "the closing bracket in \"" + std::string(text.substr(start)) + "\" variable is missing";
        if (!name.empty() || i < text.size()) return false;
      } else {
        ++i;
      }
    }
    if (name.empty()) {
      error = "invalid variable name in \"" + std::string(text) + "\"";
      return false;
    }
    std::string value;
    if (lookup(lower(name), value)) out += value;
  }
  return true;
}

bool evaluate_condition(std::string_view expr, const Lookup& lookup, bool& result, Match& match, std::string& error) {
  // The left side: a run of name characters, '$', braces and quotes,
  // lower-cased (nginx lowers it in place).
  size_t p = 0;
  std::string left_text;
  for (; p < expr.size(); ++p) {
    const char c = expr[p];
    if (c >= 'A' && c <= 'Z') {
      left_text.push_back(char(c | 0x20));
      continue;
    }
    if (name_char(c) || c == '$' || c == '{' || c == '}' || c == '"' || c == '\'') {
      left_text.push_back(c);
      continue;
    }
    break;
  }
  while (p < expr.size() && expr[p] == ' ') ++p;
  std::string left;
  if (!evaluate(left_text, lookup, left, error)) return false;
  if (p == expr.size()) {
    result = !left.empty();
    return true;
  }
  bool negative = false;
  if (expr[p] == '=') {
    ++p;
  } else if (p + 1 < expr.size() && expr[p] == '!' && expr[p + 1] == '=') {
    negative = true;
    p += 2;
  } else {
    error = "invalid expression in \"" + std::string(expr) + "\"";
    return false;
  }
  while (p < expr.size() && expr[p] == ' ') ++p;
  std::string_view right_text = expr.substr(p);
  bool regex = false;
  if (right_text.size() > 1 && right_text.front() == '/') {
    if (right_text.back() != '/') {
      error = "invalid expression in \"" + std::string(expr) + "\"";
      return false;
    }
    regex = true;
    right_text = right_text.substr(1, right_text.size() - 2);
  } else if (right_text.size() > 1 && right_text[0] == '\\' && right_text[1] == '/') {
    right_text.remove_prefix(1);
  }
  std::string right;
  if (!evaluate(right_text, lookup, right, error)) return false;
  bool equal = false;
  if (!regex) {
    equal = left == right;
  } else if (!regex_match(right, left, equal, match, error)) {
    return false;
  }
  result = equal != negative;
  return true;
}

std::string entity_encode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  core::append_html_escaped(out, s);
  return out;
}

std::string url_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    const bool escape = c < 0x20 || c >= 0x7f || c == ' ' || c == '"' || c == '#' || c == '%' || c == '\'' ||
                        c == '<' || c == '>' || c == '\\' || c == '^' || c == '`' || c == '{' || c == '|' ||
                        c == '}';
    if (!escape) {
      out.push_back(ch);
      continue;
    }
    out.push_back('%');
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xf]);
  }
  return out;
}

}  // namespace torii::ssi
