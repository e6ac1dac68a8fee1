// The sub module's search: finds the `sub_filter` strings in a body that
// arrives in pieces and replaces them, as nginx's sub filter does.
//
// A pure transform (bytes in, bytes out), fuzzed by fuzz/sub_matcher_fuzz.cc.
// The rules are nginx's: the body is compared case-insensitively (ASCII)
// against strings lower-cased at load; at each position, left to right, the
// strings are tried in the order written and the first that matches is
// replaced, and the search goes on after it (matches never overlap). A
// string that matches as far as the piece goes holds that tail back until
// the next piece decides it, so a match across a piece boundary is found.
// With `once`, each string is replaced at most once, and once every one
// has been, the rest of the body passes untouched. At the end of the body
// a held tail goes out as it came (nginx sends its "looked" bytes so too).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace torii::sub {

class Matcher {
 public:
  // `patterns`: non-empty, lower-case. `once`: sub_filter_once.
  Matcher(std::vector<std::string> patterns, bool once);

  // Appends the replacement for pattern `index` to `out`.
  using Replace = std::function<void(size_t index, std::string& out)>;

  // Appends to `out` what of the body so far is decided.
  void feed(std::string_view data, std::string& out, const Replace& replace);
  // The body ended: appends what was held back.
  void finish(std::string& out);

  // Bytes held back, waiting for the next piece (fewer than the longest pattern).
  size_t held() const { return held_.size(); }
  // With `once`, every pattern was replaced: nothing more will be.
  bool exhausted() const { return once_ && remaining_ == 0; }

 private:
  enum class Outcome { no, partial, yes };
  Outcome compare(std::string_view in, size_t at, const std::string& pattern) const;

  std::vector<std::string> patterns_;
  std::vector<bool> applied_;
  size_t remaining_;
  bool once_;
  bool may_start_[256] = {};  // bytes that begin some pattern, either case
  std::string held_;
};

}  // namespace torii::sub
