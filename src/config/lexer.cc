#include "config/lexer.h"

namespace torii::config {

namespace {
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
}  // namespace

std::string unescape(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == '\\' && i + 1 < raw.size()) {
      char n = raw[i + 1];
      switch (n) {
        case '"':
        case '\'':
        case '\\':
          out += n;
          ++i;
          continue;
        case 'n':
          out += '\n';
          ++i;
          continue;
        case 't':
          out += '\t';
          ++i;
          continue;
        case 'r':
          out += '\r';
          ++i;
          continue;
        default:
          break;
      }
    }
    out += c;
  }
  return out;
}

Error Lexer::error(int line, const std::string& message) const {
  return make_error(std::string(file_) + ":" + std::to_string(line) + ": " + message);
}

Result<Token> Lexer::next() {
  // Skip blanks and comments; '#' opens a comment only where a token could start.
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '\n') {
      ++line_;
      ++pos_;
    } else if (is_space(c)) {
      ++pos_;
    } else if (c == '#') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
  Token t;
  t.line = line_;
  if (pos_ >= text_.size()) {
    t.kind = Token::Kind::eof;
    return t;
  }
  char c = text_[pos_];
  switch (c) {
    case '{':
      ++pos_;
      t.kind = Token::Kind::open_brace;
      return t;
    case '}':
      ++pos_;
      t.kind = Token::Kind::close_brace;
      return t;
    case ';':
      ++pos_;
      t.kind = Token::Kind::semicolon;
      return t;
    case '"':
    case '\'':
      ++pos_;
      return read_quoted(c);
    default:
      return read_bare();
  }
}

Result<Token> Lexer::read_quoted(char quote) {
  Token t;
  t.kind = Token::Kind::word;
  t.quoted = true;
  t.line = line_;
  size_t start = pos_;
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '\\' && pos_ + 1 < text_.size()) {
      if (text_[pos_ + 1] == '\n') ++line_;
      pos_ += 2;
      continue;
    }
    if (c == '\n') ++line_;
    if (c == quote) {
      t.text = unescape(text_.substr(start, pos_ - start));
      ++pos_;
      // Like nginx, a closing quote must be followed by a separator, or by
      // the ')' that closes an `if` condition: `if ($a = "b")`, read as a
      // word of its own.
      if (pos_ < text_.size()) {
        char n = text_[pos_];
        if (!is_space(n) && n != ';' && n != '{' && n != '}' && n != ')') {
          return error(line_, std::string("unexpected \"") + n + "\"");
        }
      }
      return t;
    }
    ++pos_;
  }
  return error(line_, "unexpected end of file, expecting \";\" or \"}\"");
}

namespace {
// At "[", "[=", "[==" ...: the level of a Lua long bracket "[==[", or -1.
int long_bracket_level(std::string_view t, size_t pos) {
  if (pos >= t.size() || t[pos] != '[') return -1;
  size_t i = pos + 1;
  while (i < t.size() && t[i] == '=') ++i;
  return i < t.size() && t[i] == '[' ? static_cast<int>(i - pos - 1) : -1;
}
}  // namespace

Status Lexer::skip_lua_block() {
  const int start_line = line_;
  int depth = 1;
  auto skip_past = [this](std::string_view end) {
    const size_t at = text_.find(end, pos_);
    const size_t stop = at == std::string_view::npos ? text_.size() : at + end.size();
    for (size_t i = pos_; i < stop; ++i)
      if (text_[i] == '\n') ++line_;
    pos_ = stop;
    return at != std::string_view::npos;
  };
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == '\n') ++line_;
    if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0) {
        ++pos_;
        return Ok{};
      }
    } else if (c == '"' || c == '\'') {
      for (++pos_; pos_ < text_.size() && text_[pos_] != c && text_[pos_] != '\n'; ++pos_)
        if (text_[pos_] == '\\') ++pos_;
      if (pos_ < text_.size() && text_[pos_] == '\n') continue;  // unterminated: Lua's error, not ours
    } else if (const int level = long_bracket_level(text_, pos_); level >= 0) {
      pos_ += static_cast<size_t>(level) + 2;
      if (!skip_past("]" + std::string(static_cast<size_t>(level), '=') + "]")) break;
      continue;
    } else if (c == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '-') {
      pos_ += 2;
      if (const int level = long_bracket_level(text_, pos_); level >= 0) {
        pos_ += static_cast<size_t>(level) + 2;
        if (!skip_past("]" + std::string(static_cast<size_t>(level), '=') + "]")) break;
      } else {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      }
      continue;
    }
    ++pos_;
  }
  return error(start_line, "unexpected end of file in a Lua block, expecting \"}\"");
}

Token Lexer::read_bare() {
  Token t;
  t.kind = Token::Kind::word;
  t.line = line_;
  size_t start = pos_;
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '\\' && pos_ + 1 < text_.size()) {
      if (text_[pos_ + 1] == '\n') ++line_;
      pos_ += 2;
      continue;
    }
    // "${name}" keeps its braces inside the word.
    if (c == '$' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '{') {
      pos_ += 2;
      while (pos_ < text_.size() && text_[pos_] != '}' && !is_space(text_[pos_]) &&
             text_[pos_] != ';')
        ++pos_;
      if (pos_ < text_.size() && text_[pos_] == '}') ++pos_;
      continue;
    }
    if (is_space(c) || c == ';' || c == '{' || c == '}') break;
    ++pos_;
  }
  t.text = unescape(text_.substr(start, pos_ - start));
  return t;
}

}  // namespace torii::config
