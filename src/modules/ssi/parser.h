// The SSI command parser (nginx's ngx_http_ssi_module): a pure, streaming
// transform over a response body. Plain text passes through; a command
// `<!--#name param="value" ... -->` comes out as a Command. The body may
// arrive in pieces cut anywhere: the parser keeps its place, and the bytes
// of a `<!--` that turns out not to start a command are given back as text.
//
// nginx's limits and states: a command name and a parameter name of at
// most 32 bytes, a value of at most `ssi_value_length`, values in double or
// single quotes with backslash escapes kept for the evaluator. Anything
// else makes the command broken: the parser skips to its `-->` and reports
// an error there (the filter prints the error message in its place).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace torii::ssi {

struct Param {
  std::string name;
  std::string value;
};

struct Command {
  std::string name;
  std::vector<Param> params;
  bool too_many_params = false;  // more than kMaxParams were given
};

constexpr size_t kMaxCommandLength = 32;
constexpr size_t kMaxParamLength = 32;
constexpr size_t kMaxParams = 16;

class Parser {
 public:
  enum class Event : uint8_t {
    more,     // `in` is used up; feed the next piece
    command,  // command() is a whole command
    error,    // a broken command ended; error() says what was wrong first
  };

  explicit Parser(size_t value_length = 255) : value_length_(value_length) {}

  // Reads from the front of `in` (advancing it) until an event. Plain text
  // is appended to `text`.
  Event feed(std::string_view& in, std::string& text);

  // The body ended. The bytes of an unfinished "<!--" prefix are text;
  // true when a command was left open (its bytes are dropped, as nginx does).
  bool finish(std::string& text);

  const Command& command() const { return command_; }
  const std::string& error() const { return error_; }

 private:
  enum class State : uint8_t {
    text,
    tag,        // "<"
    comment0,   // "<!"
    comment1,   // "<!-"
    sharp,      // "<!--"
    precommand,
    name,
    preparam,
    param,
    preequal,
    prevalue,
    double_quoted,
    single_quoted,
    quoted_symbol,
    postparam,
    end0,  // "-"
    end1,  // "--"
    broken,
    broken_end0,
    broken_end1,
  };

  void fail(std::string message, State next);
  bool append_value(char c);

  size_t value_length_;
  State state_ = State::text;
  State quoted_in_ = State::double_quoted;  // the state a backslash came from
  size_t looked_ = 0;                        // bytes of "<!--" held back
  Command command_;
  Param* param_ = nullptr;  // the parameter being read (null past kMaxParams)
  Param overflow_;          // where parameters past kMaxParams are read into
  std::string error_;
};

}  // namespace torii::ssi
