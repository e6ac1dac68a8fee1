#include "load/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace torii::load {
namespace {

// The value at percentile p of a sorted list, by the same definition the
// histogram uses: the smallest value with at least p% at or below it.
uint64_t reference(const std::vector<uint64_t>& sorted, double p) {
  auto rank = uint64_t(std::ceil(p / 100.0 * double(sorted.size())));
  rank = std::clamp<uint64_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

void expect_close(uint64_t got, uint64_t want, const char* what) {
  // Within the bucket precision: 1/128 of the value, plus 1 for small integers.
  double tolerance = double(want) / 128.0 + 1.0;
  EXPECT_LE(std::fabs(double(got) - double(want)), tolerance) << what << ": got " << got << " want " << want;
}

void check_against_reference(std::vector<uint64_t> values) {
  Histogram h;
  for (uint64_t v : values) h.record(v);
  std::sort(values.begin(), values.end());
  ASSERT_EQ(h.count(), values.size());
  EXPECT_EQ(h.min(), values.front());
  EXPECT_EQ(h.max(), values.back());
  double sum = 0;
  for (uint64_t v : values) sum += double(v);
  EXPECT_NEAR(h.mean(), sum / double(values.size()), 1e-6 * sum / double(values.size()));
  for (double p : {0.0, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99, 100.0}) {
    SCOPED_TRACE(p);
    expect_close(h.percentile(p), reference(values, p), "percentile");
  }
}

TEST(LoadHistogram, BucketsCoverEveryValueWithinPrecision) {
  // Every bucket's range holds the values mapped to it, and its width is at
  // most 1/128 of its low end (exact below 256).
  const uint64_t values[] = {0,       1,           127,         128,            255,
                             256,     257,         511,         512,            1000,
                             123456,  1'000'000,   999'999'999, 60'000'000'000, Histogram::kMaxTrackable};
  for (uint64_t v : values) {
    size_t b = Histogram::bucket_of(v);
    ASSERT_LT(b, Histogram::kBuckets) << v;
    EXPECT_LE(Histogram::bucket_low(b), v);
    EXPECT_GE(Histogram::bucket_high(b), v);
    uint64_t width = Histogram::bucket_high(b) - Histogram::bucket_low(b) + 1;
    if (v < 256) {
      EXPECT_EQ(width, 1u);
    } else {
      EXPECT_LE(double(width), double(Histogram::bucket_low(b)) / 128.0 + 1e-9) << v;
    }
  }
  // Adjacent buckets tile the range with no gap.
  for (size_t b = 1; b < Histogram::kBuckets; ++b) {
    ASSERT_EQ(Histogram::bucket_low(b), Histogram::bucket_high(b - 1) + 1) << b;
  }
}

TEST(LoadHistogram, UniformMicrosecondsToSecondsMatchSortedReference) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<uint64_t> dist(1'000, 2'000'000'000);
  std::vector<uint64_t> values(100'000);
  for (auto& v : values) v = dist(rng);
  check_against_reference(values);
}

TEST(LoadHistogram, LongTailedLatenciesMatchSortedReference) {
  // Mostly ~100 µs with a tail of stalls up to minutes: the shape that
  // matters for p99.9.
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> body(std::log(100'000.0), 0.5);
  std::uniform_int_distribution<uint64_t> stall(10'000'000, 120'000'000'000);
  std::vector<uint64_t> values;
  for (int i = 0; i < 50'000; ++i) values.push_back(uint64_t(body(rng)));
  for (int i = 0; i < 100; ++i) values.push_back(stall(rng));
  check_against_reference(values);
}

TEST(LoadHistogram, SmallCountsAndRepeatedValues) {
  check_against_reference({5});
  check_against_reference({100, 100, 100, 100});
  check_against_reference({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  check_against_reference({300'000, 1'000'000'000});
}

TEST(LoadHistogram, MergeEqualsRecordingEverythingInOne) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<uint64_t> dist(1, 50'000'000);
  Histogram a, b, all;
  std::vector<uint64_t> values;
  for (int i = 0; i < 20'000; ++i) {
    uint64_t v = dist(rng);
    values.push_back(v);
    (i % 3 ? a : b).record(v);
    all.record(v);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  for (double p : {50.0, 90.0, 99.0, 99.9}) EXPECT_EQ(a.percentile(p), all.percentile(p));
  std::sort(values.begin(), values.end());
  expect_close(a.percentile(99), reference(values, 99), "merged p99");
}

TEST(LoadHistogram, ValuesBeyondTheRangeAreClampedButMaxIsExact) {
  Histogram h;
  uint64_t huge = Histogram::kMaxTrackable * 4;
  h.record(1000);
  h.record(huge);
  EXPECT_EQ(h.max(), huge);
  EXPECT_EQ(h.percentile(100), huge);
  expect_close(h.percentile(50), 1000, "p50");
}

TEST(LoadHistogram, EmptyHistogramReportsZero) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.percentile(99), 0u);
  EXPECT_EQ(h.mean(), 0.0);
}

}  // namespace
}  // namespace torii::load
