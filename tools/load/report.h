// The end-of-run summary, k6's names and layout, as text and as JSON with the
// same figures.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "load/options.h"
#include "load/stats.h"

namespace torii::load {

struct RunResult {
  const Options& options;
  const Stats& stats;
  double seconds;  // from the start to the last request (-n) or the end (-d)
};

void print_summary(std::FILE* out, const RunResult& r);
std::string summary_json(const RunResult& r);

// "812.5µs", "1.25ms", "2.03s", "1m12s".
std::string format_duration(uint64_t ns);
// "950 B", "12 kB", "3.4 MB" (SI units, as k6).
std::string format_bytes(double bytes);

}  // namespace torii::load
