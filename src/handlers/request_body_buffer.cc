#include "handlers/request_body_buffer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <ctime>

namespace torii::handlers {

namespace {

// A nameless file in `dir`, made on first use like nginx's temp paths.
int open_temp_file(const std::string& dir, const char*& what) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) {
      // No O_TMPFILE on this file system: a named file, unlinked at once.
      std::string tmpl = dir + "/torii-body-XXXXXX";
      fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
      if (fd >= 0) {
        ::unlink(tmpl.c_str());
        return fd;
      }
    }
    if (errno != ENOENT || attempt > 0 || ::mkdir(dir.c_str(), 0700) != 0) break;
  }
  what = "open() temporary file";
  return -1;
}

// nginx numbers its temporary files; the process's counter starts from
// the clock so that a restart does not walk over the files `on` kept.
std::atomic<uint64_t> next_file_number{uint64_t(::time(nullptr)) % 1'000'000'000};

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
  fd_ = open_temp_file(temp_dir_, what_);
  if (fd_ < 0) return false;
  if (!write_all(memory_)) return false;
  std::string().swap(memory_);
  return true;
}

bool RequestBodyBuffer::open_named() {
  for (int attempt = 0; attempt < 16; ++attempt) {
    char name[16];
    std::snprintf(name, sizeof name, "/%010llu",
                  static_cast<unsigned long long>(next_file_number.fetch_add(1) % 10'000'000'000ULL));
    std::string path = temp_dir_ + name;
    int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && errno == ENOENT && ::mkdir(temp_dir_.c_str(), 0700) == 0)
      fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) {
      fd_ = fd;
      file_name_ = std::move(path);
      return true;
    }
    if (errno != EEXIST) break;  // another file has this number: take the next
  }
  what_ = "open() temporary file";
  return false;
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
