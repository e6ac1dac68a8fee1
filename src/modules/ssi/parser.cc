#include "modules/ssi/parser.h"

#include <cstring>

namespace torii::ssi {

namespace {

constexpr std::string_view kOpen = "<!--";

bool space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

}  // namespace

void Parser::fail(std::string message, State next) {
  if (error_.empty()) error_ = std::move(message);
  state_ = next;
}

bool Parser::append_value(char c) {
  if (param_->value.size() >= value_length_) {
    fail("too long " + quote(param_->value + c + "...") + " value of " + quote(param_->name) + " parameter in " +
             quote(command_.name) + " SSI command",
         State::broken);
    return false;
  }
  param_->value.push_back(c);
  return true;
}

Parser::Event Parser::feed(std::string_view& in, std::string& text) {
  while (!in.empty()) {
    if (state_ == State::text) {
      // The tight loop: everything up to the next '<' is text.
      const void* lt = memchr(in.data(), '<', in.size());
      if (!lt) {
        text.append(in);
        in = {};
        return Event::more;
      }
      const size_t at = size_t(static_cast<const char*>(lt) - in.data());
      text.append(in.substr(0, at));
      in.remove_prefix(at + 1);
      state_ = State::tag;
      looked_ = 1;
      continue;
    }
    const char c = in.front();
    in.remove_prefix(1);
    switch (state_) {
      case State::text:
        break;
      case State::tag:
      case State::comment0:
      case State::comment1:
      case State::sharp: {
        const char want = state_ == State::tag ? '!' : state_ == State::sharp ? '#' : '-';
        if (c == want) {
          if (state_ == State::sharp) {
            looked_ = 0;
            state_ = State::precommand;
          } else {
            ++looked_;
            state_ = State(uint8_t(state_) + 1);
          }
          break;
        }
        // Not a command after all: what was held is text.
        text.append(kOpen.substr(0, looked_));
        if (c == '<') {
          looked_ = 1;
          state_ = State::tag;
        } else {
          looked_ = 0;
          text.push_back(c);
          state_ = State::text;
        }
        break;
      }
      case State::precommand:
        if (space(c)) break;
        command_.name.assign(1, c);
        command_.params.clear();
        command_.too_many_params = false;
        error_.clear();
        state_ = State::name;
        break;
      case State::name:
        if (space(c)) {
          state_ = State::preparam;
        } else if (c == '-') {
          state_ = State::end0;
        } else if (command_.name.size() == kMaxCommandLength) {
          fail("the " + quote(command_.name + c + "...") + " SSI command is too long", State::broken);
        } else {
          command_.name.push_back(c);
        }
        break;
      case State::preparam:
        if (space(c)) break;
        if (c == '-') {
          state_ = State::end0;
          break;
        }
        if (command_.params.size() < kMaxParams + 1) {
          command_.params.emplace_back();
          param_ = &command_.params.back();
        } else {
          // Counted, not kept: the command is refused when it runs.
          command_.too_many_params = true;
          overflow_ = Param{};
          param_ = &overflow_;
        }
        param_->name.assign(1, c);
        state_ = State::param;
        break;
      case State::param:
        if (space(c)) {
          state_ = State::preequal;
        } else if (c == '=') {
          state_ = State::prevalue;
        } else if (c == '-') {
          fail("unexpected \"-\" symbol after " + quote(param_->name) + " parameter in " + quote(command_.name) +
                   " SSI command",
               State::broken_end0);
        } else if (param_->name.size() == kMaxParamLength) {
          fail("too long " + quote(param_->name + c + "...") + " parameter in " + quote(command_.name) +
                   " SSI command",
               State::broken);
        } else {
          param_->name.push_back(c);
        }
        break;
      case State::preequal:
      case State::prevalue:
        if (space(c)) break;
        if (state_ == State::preequal && c == '=') {
          state_ = State::prevalue;
        } else if (state_ == State::prevalue && (c == '"' || c == '\'')) {
          state_ = c == '"' ? State::double_quoted : State::single_quoted;
        } else {
          fail(std::string("unexpected \"") + c + "\" symbol " +
                   (state_ == State::preequal ? "after " : "before value of ") + quote(param_->name) +
                   " parameter in " + quote(command_.name) + " SSI command",
               c == '-' ? State::broken_end0 : State::broken);
        }
        break;
      case State::double_quoted:
      case State::single_quoted:
        if (c == (state_ == State::double_quoted ? '"' : '\'')) {
          state_ = State::postparam;
          break;
        }
        // The backslash stays in the value: the evaluator reads the escapes.
        if (!append_value(c)) break;
        if (c == '\\') {
          quoted_in_ = state_;
          state_ = State::quoted_symbol;
        }
        break;
      case State::quoted_symbol:
        state_ = quoted_in_;
        append_value(c);
        break;
      case State::postparam:
        if (space(c)) {
          state_ = State::preparam;
        } else if (c == '-') {
          state_ = State::end0;
        } else {
          fail(std::string("unexpected \"") + c + "\" symbol after " + quote(param_->value) + " value of " +
                   quote(param_->name) + " parameter in " + quote(command_.name) + " SSI command",
               State::broken);
        }
        break;
      case State::end0:
      case State::end1:
        if (state_ == State::end0 && c == '-') {
          state_ = State::end1;
        } else if (state_ == State::end1 && c == '>') {
          state_ = State::text;
          return Event::command;
        } else {
          fail(std::string("unexpected \"") + c + "\" symbol in " + quote(command_.name) + " SSI command",
               State::broken);
        }
        break;
      case State::broken:
        if (c == '-') state_ = State::broken_end0;
        break;
      case State::broken_end0:
        state_ = c == '-' ? State::broken_end1 : State::broken;
        break;
      case State::broken_end1:
        if (c == '>') {
          state_ = State::text;
          return Event::error;
        }
        state_ = State::broken;
        break;
    }
  }
  return Event::more;
}

bool Parser::finish(std::string& text) {
  const bool open = state_ > State::sharp;
  if (state_ != State::text && !open) text.append(kOpen.substr(0, looked_));
  state_ = State::text;
  looked_ = 0;
  return open;
}

}  // namespace torii::ssi
