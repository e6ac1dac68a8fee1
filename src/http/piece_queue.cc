#include "http/piece_queue.h"

#include <algorithm>

namespace torii::http {

bool PieceQueue::front_slice(size_t max, std::string_view& out) {
  const Piece& p = pieces_.front();
  const size_t n = size_t(std::min<int64_t>(p.length, int64_t(max)));
  if (!p.file) {
    out = std::string_view(p.data).substr(0, n);
  } else if (p.file->has_content()) {
    out = std::string_view(p.file->content).substr(size_t(p.offset), n);
  } else {
    read_buf_.resize(n);
    if (!read_exact(p.file->fd, read_buf_.data(), n, p.offset)) return false;
    out = read_buf_;
  }
  return true;
}

void PieceQueue::consume(size_t n) {
  if (pieces_.empty()) return;  // the filter was aborted while it used the slice
  Piece& p = pieces_.front();
  p.offset += int64_t(n);
  p.length -= int64_t(n);
  if (!p.file) p.data.erase(0, n);
  if (p.length <= 0) pieces_.pop_front();
}

}  // namespace torii::http
