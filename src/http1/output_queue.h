// What a connection still has to write: memory and file ranges, in order.
// Memory pieces leave by writev, files by sendfile (or pread into memory
// when sendfile is off or the transport is TLS; a small file the open-file
// cache holds leaves from its cached bytes), so a 20 KB file goes out in
// one or two syscalls.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "http/response.h"
#include "net/transport.h"

namespace torii::http1 {

class OutputQueue {
 public:
  enum class Result { done, again, error };

  void append(std::string_view data);
  void append_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length);
  // Appends what `write(std::string&)` appends, straight into the last
  // memory piece: a head is serialised in place, not through a scratch
  // string. Returns the bytes added.
  template <class Write>
  size_t append_with(Write&& write) {
    std::string& tail = memory_tail();
    const size_t before = tail.size();
    write(tail);
    const size_t added = tail.size() - before;
    memory_bytes_ += added;
    if (tail.empty()) pieces_.pop_back();  // no empty piece: flush could not retire it
    return added;
  }

  // Writes as much as the transport takes. File ranges go by sendfile when
  // `use_sendfile` and the transport can; else they are read into memory
  // first. errno is kept on error.
  Result flush(net::Transport& t, bool use_sendfile);

  bool empty() const { return first_ == pieces_.size(); }
  // Bytes waiting in memory (files not counted): bounds pipelining.
  size_t memory_bytes() const { return memory_bytes_; }
  bool has_file() const { return files_ > 0; }
  uint64_t bytes_written() const { return bytes_written_; }
  void clear();
  // Gives back the slots' memory when nothing is queued (an idle
  // keep-alive connection keeps no buffers).
  void release_if_empty();

 private:
  struct Piece {
    std::string data;  // memory piece when file is null
    std::shared_ptr<const http::OpenFile> file;
    int64_t offset = 0;
    int64_t length = 0;
    size_t sent = 0;  // of data
  };
  bool load_file_piece(Piece& p);
  // A file piece written from the open-file cache's copy of its bytes.
  static bool from_cache(const Piece& p, bool zero_copy);
  // The last piece if it is memory with room to merge into, else a new one.
  std::string& memory_tail();
  void push_back(Piece p);
  void pop_front();

  // pieces_[first_..] wait; the vector keeps its capacity between
  // responses (a deque would allocate on construction).
  std::vector<Piece> pieces_;
  size_t first_ = 0;
  size_t memory_bytes_ = 0;
  size_t files_ = 0;
  uint64_t bytes_written_ = 0;
};

}  // namespace torii::http1
