// The sub filter's matcher: up to three patterns and a body from the input,
// the body fed whole and again in pieces of sizes the input chooses. The
// output must not depend on where the pieces were cut (a match across a
// boundary is found as in one piece), must equal a plain reference search,
// and nothing may stay held once the body ended.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "modules/sub/sub_matcher.h"

using torii::sub::Matcher;

namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? char(c | 0x20) : c; }

void replace(size_t index, std::string& out) {
  out.push_back('<');
  out.push_back(char('0' + index));
  out.push_back('>');
}

// The rules spelled out plainly over the whole body at once. A pattern that
// reaches past the end of the body holds its tail: it goes out unchanged.
std::string reference(const std::vector<std::string>& patterns, bool once, std::string_view body) {
  std::string out;
  std::vector<bool> used(patterns.size());
  size_t left = patterns.size();
  size_t i = 0;
  while (i < body.size()) {
    if (once && left == 0) break;
    size_t hit = patterns.size();
    bool partial = false;
    for (size_t k = 0; k < patterns.size(); ++k) {
      if (once && used[k]) continue;
      const std::string& p = patterns[k];
      size_t n = 0;
      while (n < p.size() && i + n < body.size() && lower(body[i + n]) == p[n]) ++n;
      if (n == p.size()) { hit = k; break; }
      if (i + n == body.size()) { partial = true; break; }
    }
    if (partial) break;
    if (hit == patterns.size()) {
      out.push_back(body[i++]);
      continue;
    }
    replace(hit, out);
    i += patterns[hit].size();
    if (once) {
      used[hit] = true;
      --left;
    }
  }
  out.append(body.substr(i));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const bool once = data[0] & 1;
  const size_t npatterns = 1 + (data[0] >> 1) % 3;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  // Patterns: short, lower-case, from a small alphabet so they do occur.
  std::vector<std::string> patterns;
  for (size_t k = 0; k < npatterns && !rest.empty(); ++k) {
    const size_t len = 1 + size_t(uint8_t(rest[0])) % 5;
    rest.remove_prefix(1);
    std::string p;
    for (size_t j = 0; j < len && !rest.empty(); ++j) {
      p.push_back(lower(char('a' + uint8_t(rest[0]) % 4)));
      rest.remove_prefix(1);
    }
    if (!p.empty()) patterns.push_back(std::move(p));
  }
  if (patterns.empty() || rest.empty()) return 0;
  // The body maps bytes onto "abcdABCD" and a few others, so matches are common.
  const std::string_view cuts = rest.substr(0, rest.size() / 4);
  std::string body;
  for (char c : rest.substr(cuts.size())) body.push_back("abcdABCD x"[uint8_t(c) % 10]);

  Matcher whole(patterns, once);
  std::string out_whole;
  whole.feed(body, out_whole, replace);
  whole.finish(out_whole);
  if (whole.held() != 0) abort();

  Matcher pieces(patterns, once);
  std::string out_pieces;
  size_t at = 0;
  for (char c : cuts) {
    if (at >= body.size()) break;
    const size_t n = 1 + uint8_t(c) % 16;
    pieces.feed(std::string_view(body).substr(at, n), out_pieces, replace);
    at += std::min(n, body.size() - at);
  }
  pieces.feed(std::string_view(body).substr(at), out_pieces, replace);
  pieces.finish(out_pieces);

  if (out_whole != out_pieces) abort();
  if (out_whole != reference(patterns, once, body)) abort();
  return 0;
}
