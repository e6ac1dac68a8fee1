// A compiled PCRE2 pattern, shared read-only by every worker thread. Used by
// regex locations and server names; matching fills config::Captures.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

struct pcre2_real_code_8;

namespace torii::config {

struct Captures;

class Regex {
 public:
  // nginx matches on raw bytes, so no UTF mode; `caseless` is for "~*".
  static Result<std::shared_ptr<Regex>> compile(std::string_view pattern, bool caseless);

  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  ~Regex();

  // True on a match. When `captures` is given it receives a copy of the
  // subject and the spans of $0..$N (unset groups are {-1, -1}).
  bool match(std::string_view subject, Captures* captures) const;

  const std::string& pattern() const { return pattern_; }
  int capture_count() const { return capture_count_; }
  // Named groups (?<name>...) as (group number, variable slot): a match
  // sets $name as nginx does. The slots are defined when the pattern compiles.
  const std::vector<std::pair<int, uint32_t>>& named() const { return named_; }

 private:
  Regex() = default;
  pcre2_real_code_8* code_ = nullptr;
  std::string pattern_;
  int capture_count_ = 0;
  std::vector<std::pair<int, uint32_t>> named_;
};

}  // namespace torii::config
