// What a connection still has to write: memory and file ranges, in order.
// Memory pieces leave by writev, files by sendfile (or pread into memory
// when sendfile is off or the transport is TLS), so a 20 KB file goes out in one or two syscalls.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>

#include "http/response.h"
#include "net/transport.h"

namespace torii::http1 {

class OutputQueue {
 public:
  enum class Result { done, again, error };

  void append(std::string_view data);
  void append_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length);

  // Writes as much as the transport takes. File ranges go by sendfile when
  // `use_sendfile` and the transport can; else they are read into memory
  // first. errno is kept on error.
  Result flush(net::Transport& t, bool use_sendfile);

  bool empty() const { return pieces_.empty(); }
  // Bytes waiting in memory (files not counted): bounds pipelining.
  size_t memory_bytes() const { return memory_bytes_; }
  bool has_file() const { return files_ > 0; }
  uint64_t bytes_written() const { return bytes_written_; }
  void clear();

 private:
  struct Piece {
    std::string data;  // memory piece when file is null
    std::shared_ptr<const http::OpenFile> file;
    int64_t offset = 0;
    int64_t length = 0;
    size_t sent = 0;  // of data
  };
  bool load_file_piece(Piece& p);

  std::deque<Piece> pieces_;
  size_t memory_bytes_ = 0;
  size_t files_ = 0;
  uint64_t bytes_written_ = 0;
};

}  // namespace torii::http1
