// Body pieces a filter holds back while the sink below it is full: bytes,
// or a range of an open file, handed back a slice at a time once there is
// room (the compression and sub filters).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>

#include "http/response.h"

namespace torii::http {

class PieceQueue {
 public:
  bool empty() const { return pieces_.empty(); }
  void clear() { pieces_.clear(); }
  void push_bytes(std::string_view data) { pieces_.push_back({nullptr, 0, int64_t(data.size()), std::string(data)}); }
  void push_file(std::shared_ptr<const OpenFile> file, int64_t offset, int64_t length) {
    pieces_.push_back({std::move(file), offset, length, {}});
  }

  // The front piece's next bytes, at most `max`, valid until the next call;
  // false when its file could not be read (errno says why).
  bool front_slice(size_t max, std::string_view& out);
  // Drops the slice front_slice() gave.
  void consume(size_t n);

 private:
  struct Piece {
    std::shared_ptr<const OpenFile> file;  // null: `data`
    int64_t offset = 0;
    int64_t length = 0;
    std::string data;
  };
  std::deque<Piece> pieces_;
  std::string read_buf_;
};

}  // namespace torii::http
