#include "http2/stream_ledger.h"

namespace torii::http2 {

void StreamLedger::opened(int32_t id) {
  if (id <= last_ || !(id & 1)) return;
  // Only the identifiers still inside the window once `id` is the last.
  int32_t first = last_ == 0 ? 1 : last_ + 2;
  const int32_t oldest = id - int32_t(2 * (kWindow - 1));
  if (first < oldest) first = oldest;
  for (int32_t skipped = first; skipped < id; skipped += 2) slot(skipped) = State::skipped;
  slot(id) = State::open;
  last_ = id;
}

StreamLedger::State StreamLedger::state(int32_t id) const {
  return in_window(id) ? states_[(uint32_t(id) >> 1) % kWindow] : State::unknown;
}

void StreamLedger::client_ended(int32_t id) {
  if (in_window(id) && slot(id) == State::open) slot(id) = State::client_ended;
}

void StreamLedger::client_reset(int32_t id) {
  if (!in_window(id)) return;
  State& s = slot(id);
  if (s == State::open || s == State::client_ended) s = State::reset_by_client;
}

void StreamLedger::closed(int32_t id) {
  if (!in_window(id)) return;
  State& s = slot(id);
  if (s == State::open) s = State::reset_by_us;
  else if (s == State::client_ended) s = State::closed_after_end;
}

}  // namespace torii::http2
