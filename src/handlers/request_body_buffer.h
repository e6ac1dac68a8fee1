// A request body held for the upstream while proxy_request_buffering is on,
// as nginx holds it: in memory up to client_body_buffer_size, beyond that
// in a temporary file under client_body_temp_path, so a large upload costs
// disk, not memory. The file has no name (O_TMPFILE, or unlinked at once):
// nothing is left behind whatever happens to the process. The body is kept
// whole so that a retry can send it again.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <string_view>

#include "core/temp_file.h"

namespace torii::handlers {

class RequestBodyBuffer {
 public:
  // client_body_in_file_only: `off` as above; otherwise the body goes to a
  // file with a name (a ten-digit number under temp_dir, as nginx names its
  // temporary files) from its first byte, which `keep` leaves in place
  // after the request and `clean` removes.
  enum class FileOnly : uint8_t { off, keep, clean };

  // `temp_levels`: client_body_temp_path's level folders, which the file
  // goes into as nginx's would (core/temp_file).
  RequestBodyBuffer(size_t memory_limit, std::string temp_dir, const core::TempLevels& temp_levels = {},
                    FileOnly file_only = FileOnly::off)
      : memory_limit_(memory_limit), temp_dir_(std::move(temp_dir)), temp_levels_(temp_levels),
        file_only_(file_only) {}
  ~RequestBodyBuffer();
  RequestBodyBuffer(const RequestBodyBuffer&) = delete;
  RequestBodyBuffer& operator=(const RequestBodyBuffer&) = delete;

  // False when the temporary file could not be made or written: errno is
  // kept and what() names the call that failed.
  bool append(std::string_view data);

  int64_t size() const { return size_; }
  bool in_file() const { return fd_ >= 0; }
  const std::string& memory() const { return memory_; }  // the body, when not in a file
  int fd() const { return fd_; }                           // the body, when in a file
  const std::string& temp_dir() const { return temp_dir_; }
  const std::string& file_name() const { return file_name_; }  // a named file's path
  const char* what() const { return what_; }

 private:
  bool spill();  // moves what is in memory to a new temporary file
  bool open_named();  // client_body_in_file_only: a new file with a name
  bool write_all(std::string_view data);

  size_t memory_limit_;
  std::string temp_dir_;
  core::TempLevels temp_levels_;
  FileOnly file_only_;
  std::string file_name_;
  std::string memory_;
  int fd_ = -1;
  int64_t size_ = 0;
  const char* what_ = "";
};

}  // namespace torii::handlers
