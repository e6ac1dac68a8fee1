#include "modules/sub/sub_matcher.h"

namespace torii::sub {

namespace {

// nginx's ngx_tolower: ASCII letters only.
inline unsigned char lower(unsigned char c) { return c >= 'A' && c <= 'Z' ? static_cast<unsigned char>(c | 0x20) : c; }

}  // namespace

Matcher::Matcher(std::vector<std::string> patterns, bool once)
    : patterns_(std::move(patterns)), applied_(patterns_.size(), false), remaining_(patterns_.size()), once_(once) {
  for (const auto& p : patterns_) {
    if (p.empty()) continue;
    for (int c = 0; c < 256; ++c)
      if (lower(static_cast<unsigned char>(c)) == static_cast<unsigned char>(p[0])) may_start_[c] = true;
  }
}

Matcher::Outcome Matcher::compare(std::string_view in, size_t at, const std::string& pattern) const {
  const size_t n = std::min(pattern.size(), in.size() - at);
  for (size_t k = 0; k < n; ++k)
    if (lower(static_cast<unsigned char>(in[at + k])) != static_cast<unsigned char>(pattern[k])) return Outcome::no;
  return n == pattern.size() ? Outcome::yes : Outcome::partial;
}

void Matcher::feed(std::string_view data, std::string& out, const Replace& replace) {
  if (exhausted()) {
    out.append(held_);
    held_.clear();
    out.append(data);
    return;
  }
  // A held tail is searched again with the new bytes after it. It is
  // shorter than the longest pattern, and only a piece that ended inside a
  // possible match leaves one, so the copy is rare and small-headed.
  std::string joined;
  std::string_view in = data;
  if (!held_.empty()) {
    joined = std::move(held_);
    held_.clear();
    joined.append(data);
    in = joined;
  }
  size_t literal = 0;  // start of the bytes not yet appended
  size_t i = 0;
  while (i < in.size()) {
    if (exhausted()) break;
    if (!may_start_[static_cast<unsigned char>(in[i])]) {
      ++i;
      continue;
    }
    bool waiting = false;
    size_t hit = patterns_.size();
    for (size_t k = 0; k < patterns_.size(); ++k) {
      if (once_ && applied_[k]) continue;
      const Outcome o = compare(in, i, patterns_[k]);
      if (o == Outcome::no) continue;
      // nginx waits for the bytes that decide a pattern tried before any
      // later one, even if a later one already matches.
      if (o == Outcome::partial) waiting = true;
      else hit = k;
      break;
    }
    if (waiting) {
      out.append(in.substr(literal, i - literal));
      held_.assign(in.substr(i));
      return;
    }
    if (hit == patterns_.size()) {
      ++i;
      continue;
    }
    out.append(in.substr(literal, i - literal));
    replace(hit, out);
    i += patterns_[hit].size();
    literal = i;
    if (once_) {
      applied_[hit] = true;
      --remaining_;
    }
  }
  out.append(in.substr(literal));
}

void Matcher::finish(std::string& out) {
  out.append(held_);
  held_.clear();
}

}  // namespace torii::sub
