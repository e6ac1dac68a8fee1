#include "http/body_replay.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/event_loop.h"
#include "log/error_log.h"

namespace torii::http {

namespace {

constexpr int64_t kPiece = 64 * 1024;

char* scratch() {
  thread_local std::unique_ptr<char[]> buf(new char[kPiece]);
  return buf.get();
}

}  // namespace

void BodyReplay::read_body(BodyReader* reader) {
  reader_ = reader;
  offset_ = 0;
  paused_ = false;
  ended_ = false;
  schedule();
}

void BodyReplay::resume_body() {
  resumed_ = true;
  if (!paused_) return;
  paused_ = false;
  schedule();
}

void BodyReplay::schedule() {
  if (scheduled_ || !reader_) return;
  scheduled_ = true;
  loop_.defer([this, alive = std::weak_ptr<char>(alive_)] {
    if (alive.expired()) return;
    scheduled_ = false;
    pump();
  });
}

void BodyReplay::pump() {
  while (reader_ && !paused_ && !ended_) {
    const int64_t left = body_->size() - offset_;
    if (left <= 0) {
      ended_ = true;
      reader_->on_body_end();
      return;
    }
    const int64_t n = std::min(left, kPiece);
    std::string_view piece;
    if (!body_->in_file()) {
      piece = std::string_view(body_->memory()).substr(size_t(offset_), size_t(n));
    } else {
      const ssize_t got = ::pread(body_->fd(), scratch(), size_t(n), offset_);
      if (got <= 0) {
        // The file is ours and unlinked: this is a disk failure. The reader
        // gets what there was; its upstream sees a short body.
        TORII_LOG(crit, "pread() request body temporary file failed (%d: %s)", got < 0 ? errno : EIO,
                  strerror(got < 0 ? errno : EIO));
        ended_ = true;
        reader_->on_body_end();
        return;
      }
      piece = std::string_view(scratch(), size_t(got));
    }
    offset_ += int64_t(piece.size());
    resumed_ = false;
    if (!reader_->on_body_data(piece) && !resumed_) paused_ = true;
  }
}

}  // namespace torii::http
