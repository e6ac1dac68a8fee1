// Splits nginx configuration text into tokens: words (bare or quoted, with
// escapes already applied), '{', '}', ';' and end of file. Each token keeps
// the line it started on.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"

namespace torii::config {

struct Token {
  enum class Kind : uint8_t { word, open_brace, close_brace, semicolon, eof };
  Kind kind = Kind::eof;
  std::string text;  // for words: the value after escapes and quote removal
  bool quoted = false;
  int line = 1;
};

class Lexer {
 public:
  // `file` only labels error messages.
  Lexer(std::string_view file, std::string_view text) : file_(file), text_(text) {}

  // The next token; errors read "FILE:LINE: message".
  Result<Token> next();
  int line() const { return line_; }
  // After the '{' of a block whose body is Lua code (`content_by_lua_block`):
  // skips to its matching '}', past Lua strings, long brackets and comments,
  // so the directive can be named in an error rather than failing as nginx
  // syntax.
  Status skip_lua_block();

 private:
  Error error(int line, const std::string& message) const;
  Result<Token> read_quoted(char quote);
  Token read_bare();

  std::string_view file_;
  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
};

// Applies nginx's escapes (\" \' \\ \n \t \r); any other backslash is kept so
// regexes such as "\.php$" survive.
std::string unescape(std::string_view raw);

}  // namespace torii::config
