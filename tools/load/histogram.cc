#include "load/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace torii::load {

// A value below 2^(kSubBits+1) is its own bucket. Above, `shift` low bits are
// dropped so that kSubBits+1 significant bits remain; the top bits lie in
// [kSubCount, 2*kSubCount) and each octave takes kSubCount buckets.
size_t Histogram::bucket_of(uint64_t value) {
  if (value > kMaxTrackable) value = kMaxTrackable;
  int msb = 63 - std::countl_zero(value | 1);
  int shift = std::max(0, msb - kSubBits);
  return size_t(shift) * kSubCount + size_t(value >> shift);
}

uint64_t Histogram::bucket_low(size_t bucket) {
  if (bucket < 2 * kSubCount) return bucket;
  uint64_t shift = bucket / kSubCount - 1;
  uint64_t top = bucket % kSubCount + kSubCount;
  return top << shift;
}

uint64_t Histogram::bucket_high(size_t bucket) {
  if (bucket < 2 * kSubCount) return bucket;
  uint64_t shift = bucket / kSubCount - 1;
  uint64_t top = bucket % kSubCount + kSubCount;
  return ((top + 1) << shift) - 1;
}

void Histogram::record(uint64_t value_ns) {
  ++counts_[bucket_of(value_ns)];
  ++count_;
  sum_ += value_ns;
  min_ = std::min(min_, value_ns);
  max_ = std::max(max_, value_ns);
}

void Histogram::merge(const Histogram& other) {
  for (size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void Histogram::reset() { *this = Histogram(); }

uint64_t Histogram::percentile(double p) const {
  if (count_ == 0) return 0;
  p = std::clamp(p, 0.0, 100.0);
  // The rank (1-based) of the value wanted, as in a sorted list.
  auto rank = uint64_t(std::ceil(p / 100.0 * double(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  // The extremes are known exactly.
  if (rank == 1) return min_;
  if (rank == count_) return max_;
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      uint64_t low = bucket_low(i), high = bucket_high(i);
      uint64_t mid = low + (high - low) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

}  // namespace torii::load
