#include "handlers/request_body_buffer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace torii::handlers {

namespace {

// A nameless file in `dir` (in the level folder the process's next temp
// number hashes to), folders made on first use like nginx's temp paths.
int open_temp_file(const std::string& dir, const core::TempLevels& levels, const char*& what) {
  const std::string name = core::hashed_temp_name(dir, levels, core::next_temp_number());
  const std::string folder = name.substr(0, name.rfind('/'));
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) {
      // No O_TMPFILE on this file system: a named file, unlinked at once.
      std::string tmpl = folder + "/torii-body-XXXXXX";
      fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
      if (fd >= 0) {
        ::unlink(tmpl.c_str());
        return fd;
      }
    }
    if (errno != ENOENT || attempt > 0 || !core::make_temp_folders(dir, levels, name)) break;
  }
  what = "open() temporary file";
  return -1;
}

}  // namespace

RequestBodyBuffer::~RequestBodyBuffer() {
  if (fd_ >= 0) ::close(fd_);
  if (file_only_ == FileOnly::clean && !file_name_.empty()) ::unlink(file_name_.c_str());
}

bool RequestBodyBuffer::append(std::string_view data) {
  if (data.empty()) return true;
  if (fd_ < 0 && file_only_ != FileOnly::off && !open_named()) return false;
  if (fd_ < 0 && memory_.size() + data.size() > memory_limit_ && !spill()) return false;
  if (fd_ < 0) {
    memory_.append(data);
  } else if (!write_all(data)) {
    return false;
  }
  size_ += int64_t(data.size());
  return true;
}

bool RequestBodyBuffer::spill() {
  fd_ = open_temp_file(temp_dir_, temp_levels_, what_);
  if (fd_ < 0) return false;
  if (!write_all(memory_)) return false;
  std::string().swap(memory_);
  return true;
}

bool RequestBodyBuffer::open_named() {
  std::string path;
  fd_ = core::create_temp_file(temp_dir_, temp_levels_, path);
  if (fd_ < 0) {
    what_ = "open() temporary file";
    return false;
  }
  file_name_ = std::move(path);
  return true;
}

bool RequestBodyBuffer::write_all(std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      what_ = "write() to temporary file";
      return false;
    }
    data.remove_prefix(size_t(n));
  }
  return true;
}

}  // namespace torii::handlers
