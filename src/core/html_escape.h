// Text put into an HTML or XML page: the four characters that would end
// a text node or an attribute value become entities.
#pragma once

#include <string>
#include <string_view>

namespace torii::core {

inline bool html_special(char c) { return c == '<' || c == '>' || c == '&' || c == '"'; }

inline void append_html_escaped(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
}

}  // namespace torii::core
