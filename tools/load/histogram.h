// Latency histogram in the style of HdrHistogram: log-linear buckets over
// nanoseconds, 128 linear sub-buckets per power of two, so any recorded
// value is known to within 1/128 (< 0.8%) from 1 ns up to about 73 minutes,
// in fixed memory (~37 KB) and O(1) per record. Larger values are clamped
// into the last bucket (the exact maximum is still kept). Histograms of
// several threads merge by adding counts.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace torii::load {

class Histogram {
 public:
  // 2^kSubBits linear sub-buckets per octave.
  static constexpr int kSubBits = 7;
  static constexpr uint64_t kSubCount = uint64_t{1} << kSubBits;
  // Values up to 2^kMaxBits - 1 ns (~73 min) are bucketed exactly.
  static constexpr int kMaxBits = 42;
  static constexpr uint64_t kMaxTrackable = (uint64_t{1} << kMaxBits) - 1;
  static constexpr size_t kBuckets = size_t(kMaxBits - kSubBits + 1) * kSubCount;

  void record(uint64_t value_ns);
  void merge(const Histogram& other);
  void reset();

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ ? min_ : 0; }
  uint64_t max() const { return max_; }
  double mean() const { return count_ ? double(sum_) / double(count_) : 0.0; }
  // The value at percentile p (0..100): the smallest recorded value such that
  // at least p% of the values are at or below it, to within the bucket
  // precision (the bucket's midpoint, kept inside [min, max]; the lowest and
  // highest ranks are the exact min and max).
  uint64_t percentile(double p) const;

  // Bucket layout, public for tests.
  static size_t bucket_of(uint64_t value);
  static uint64_t bucket_low(size_t bucket);
  static uint64_t bucket_high(size_t bucket);

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  // Sum for the mean; 2^64 ns is 584 years of accumulated latency.
  uint64_t sum_ = 0;
};

}  // namespace torii::load
