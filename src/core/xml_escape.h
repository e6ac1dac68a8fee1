// Text put into an XML document from outside it (file names): the markup
// characters become entities (html_escape.h), and what no XML 1.0
// document may hold at all, even as a character reference (C0 controls
// other than tab, LF and CR) or what is not UTF-8, becomes U+FFFD, so
// the document stays well-formed whatever the name's bytes.
#pragma once

#include <string>
#include <string_view>

namespace torii::core {

// The length of the well-formed UTF-8 sequence at s[i], 0 if there is none.
inline size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the second byte's range (RFC 3629's table)
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;  // no surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + n > s.size() || b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xbf) return 0;
  // U+FFFE and U+FFFF are not XML characters either.
  if (n == 3 && c == 0xef && b(i + 1) == 0xbf && b(i + 2) >= 0xbe) return 0;
  return n;
}

inline void append_xml_escaped(std::string& out, std::string_view s) {
  static constexpr std::string_view kReplacement = "\xef\xbf\xbd";
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    switch (c) {
      case '<': out += "&lt;"; ++i; continue;
      case '>': out += "&gt;"; ++i; continue;
      case '&': out += "&amp;"; ++i; continue;
      case '"': out += "&quot;"; ++i; continue;
      default: break;
    }
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      out += kReplacement;
      ++i;
      continue;
    }
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
}

}  // namespace torii::core
