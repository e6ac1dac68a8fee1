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
