// Where a thread's requests come from, closed or open loop, as one interface
// for the worker: is one available now, take it (with the time its latency
// counts from), give it back (a request the server refused before handling
// it, sent again on another connection).
//
// Closed loop: a request is available whenever a connection is free, up to
// the thread's share of -n; its latency counts from when it is sent.
// Open loop: a request is available once the RateSchedule says it is due; its
// latency counts from then, however long it waited for a free connection.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "load/rate_schedule.h"

namespace torii::load {

class RequestSource {
 public:
  // Closed loop; `limit` requests in all (UINT64_MAX: no limit).
  explicit RequestSource(uint64_t limit);
  // Open loop.
  explicit RequestSource(RateSchedule schedule);

  void start(int64_t start_ns);
  // Room for requests given back without allocating later.
  void reserve(size_t in_flight) { given_back_.reserve(in_flight); }

  bool open_loop() const { return schedule_.has_value(); }
  bool available(int64_t now_ns) const;
  // Takes a request; returns the time its latency counts from.
  int64_t take(int64_t now_ns);
  void give_back(int64_t from_ns);
  // No request will ever be available again.
  bool exhausted() const;
  // Open loop: when the next request is due (INT64_MAX: none; INT64_MIN: a
  // request given back, due at once).
  int64_t next_due() const;
  // Open loop: requests due by now that have not left yet.
  uint64_t waiting(int64_t now_ns) const;

 private:
  uint64_t limit_ = 0;  // closed loop; UINT64_MAX: none
  uint64_t taken_ = 0;  // closed loop
  std::optional<RateSchedule> schedule_;
  std::vector<int64_t> given_back_;  // open loop: due times kept
};

}  // namespace torii::load
