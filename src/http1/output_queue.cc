#include "http1/output_queue.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/string_pool.h"

namespace torii::http1 {

namespace {
constexpr size_t kMergeLimit = 16 * 1024;   // small appends join the last piece
constexpr int64_t kReadChunk = 128 * 1024;  // pread size when sendfile is off
constexpr int kMaxIov = 64;
constexpr size_t kCompactAfter = 32;  // spent slots kept before the vector is compacted
}  // namespace

void OutputQueue::push_back(Piece p) {
  if (empty()) {
    pieces_.clear();
    first_ = 0;
    if (pieces_.capacity() == 0) pieces_.reserve(4);  // a head, a body, a chunk trailer
  }
  pieces_.push_back(std::move(p));
}

void OutputQueue::pop_front() {
  if (first_ + 1 == pieces_.size()) {
    if (!pieces_.back().file) core::StringPool::give(pieces_.back().data);
    pieces_.clear();  // the last one: every slot goes
    first_ = 0;
    return;
  }
  // Lets go of the memory and the file now. Only what the piece holds is
  // reset: assigning a whole new Piece cost more than the rest of the pop.
  Piece& spent = pieces_[first_];
  if (spent.file) spent.file.reset();
  else core::StringPool::give(spent.data);
  if (++first_ >= kCompactAfter && first_ * 2 >= pieces_.size()) {
    // A stream whose queue never empties: drop the spent slots (amortised O(1)).
    pieces_.erase(pieces_.begin(), pieces_.begin() + ptrdiff_t(first_));
    first_ = 0;
  }
}

std::string& OutputQueue::memory_tail() {
  if (empty() || pieces_.back().file || pieces_.back().data.size() >= kMergeLimit) {
    Piece p;
    p.data = core::StringPool::take();
    push_back(std::move(p));
  }
  return pieces_.back().data;
}

void OutputQueue::append(std::string_view data) {
  if (data.empty()) return;
  memory_bytes_ += data.size();
  memory_tail().append(data);
}

void OutputQueue::append_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) {
  if (length <= 0) return;
  Piece p;
  p.file = std::move(file);
  p.offset = offset;
  p.length = length;
  push_back(std::move(p));
  ++files_;
}

void OutputQueue::clear() {
  pieces_.clear();
  first_ = 0;
  memory_bytes_ = 0;
  files_ = 0;
}

// Replaces the front of a file piece with its bytes read into memory.
bool OutputQueue::load_file_piece(Piece& p) {
  int64_t n = std::min(p.length, kReadChunk);
  std::string buf;
  buf.resize(size_t(n));
  ssize_t got = pread(p.file->fd, buf.data(), size_t(n), p.offset);
  if (got <= 0) {
    if (got == 0) errno = EIO;  // the file shrank under us
    return false;
  }
  buf.resize(size_t(got));
  p.offset += got;
  p.length -= got;
  Piece mem;
  mem.data = std::move(buf);
  memory_bytes_ += mem.data.size();
  if (p.length == 0) {
    p = std::move(mem);
    --files_;
  } else if (first_ > 0) {
    pieces_[--first_] = std::move(mem);
  } else {
    pieces_.insert(pieces_.begin(), std::move(mem));
  }
  return true;
}

bool OutputQueue::from_cache(const Piece& p, bool zero_copy) {
  return p.file && !zero_copy && p.file->has_content() &&
         uint64_t(p.offset + p.length) <= p.file->content.size();
}

OutputQueue::Result OutputQueue::flush(net::Transport& t, bool use_sendfile) {
  // A plain socket with sendfile on takes file ranges zero-copy. Otherwise
  // the bytes pass through memory: a file whose bytes the open-file cache
  // holds is written from them together with the memory pieces around it;
  // another goes by the TLS transport's read into its own record buffer
  // (cheaper than a copy into the queue), or is read into the queue.
  const bool zero_copy = use_sendfile && !t.is_tls() && t.can_sendfile();
  use_sendfile = (use_sendfile || t.is_tls()) && t.can_sendfile();
  while (!empty()) {
    Piece& front = pieces_[first_];
    if (front.file && !from_cache(front, zero_copy)) {
      if (!use_sendfile) {
        if (!load_file_piece(front)) return Result::error;
        continue;
      }
      auto r = t.sendfile(front.file->fd, front.offset, size_t(std::min<int64_t>(front.length, 1 << 30)));
      if (r.status == net::IoStatus::again) return Result::again;
      if (r.status != net::IoStatus::ok) return Result::error;
      bytes_written_ += r.bytes;
      front.offset += int64_t(r.bytes);
      front.length -= int64_t(r.bytes);
      if (front.length == 0) {
        pop_front();
        --files_;
      }
      continue;
    }
    // Gather consecutive memory pieces (and cached file bytes) into one writev.
    iovec iov[kMaxIov];
    int count = 0;
    bool more = false;
    for (auto it = pieces_.begin() + ptrdiff_t(first_); it != pieces_.end() && count < kMaxIov; ++it) {
      if (it->file) {
        if (!from_cache(*it, zero_copy)) {
          more = use_sendfile;  // a head followed by sendfile: share the segments
          break;
        }
        iov[count].iov_base = const_cast<char*>(it->file->content.data()) + it->offset;
        iov[count].iov_len = size_t(it->length);
      } else {
        iov[count].iov_base = it->data.data() + it->sent;
        iov[count].iov_len = it->data.size() - it->sent;
      }
      ++count;
    }
    auto r = t.writev(iov, count, more);
    if (r.status == net::IoStatus::again) return Result::again;
    if (r.status != net::IoStatus::ok) return Result::error;
    bytes_written_ += r.bytes;
    size_t left = r.bytes;
    while (left > 0) {
      Piece& p = pieces_[first_];
      const size_t avail = p.file ? size_t(p.length) : p.data.size() - p.sent;
      const size_t k = std::min(left, avail);
      left -= k;
      if (p.file) {
        p.offset += int64_t(k);
        p.length -= int64_t(k);
      } else {
        p.sent += k;
        memory_bytes_ -= k;
      }
      if (k == avail) {
        if (p.file) --files_;
        pop_front();
      }
    }
  }
  return Result::done;
}

void OutputQueue::release_if_empty() {
  if (!empty()) return;
  std::vector<Piece>().swap(pieces_);
  first_ = 0;
}

}  // namespace torii::http1
