#include "core/temp_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

namespace torii::core {

std::string hashed_temp_name(std::string_view dir, const TempLevels& levels, uint32_t n) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%010u", n);
  const std::string_view number(digits, 10);
  std::string name(dir);
  // Level i takes the digits just before those level i-1 took, from the end.
  size_t end = number.size();
  for (const uint8_t level : levels) {
    if (level == 0 || level > end) break;
    end -= level;
    name.push_back('/');
    name.append(number.substr(end, level));
  }
  name.push_back('/');
  name.append(number);
  return name;
}

uint32_t next_temp_number() {
  // Started apart per process so a restarted server seldom meets a file
  // an earlier one left; a clash only costs a retry (O_EXCL).
  static std::atomic<uint32_t> next{static_cast<uint32_t>(::getpid()) * 7919u};
  return next.fetch_add(1, std::memory_order_relaxed);
}

bool make_temp_folders(std::string_view dir, const TempLevels& levels, const std::string& name) {
  size_t pos = dir.size();
  std::string folder(dir);
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) return false;
  for (const uint8_t level : levels) {
    if (level == 0) break;
    pos += 1 + level;
    if (pos >= name.size()) break;
    folder.assign(name, 0, pos);
    if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) return false;
  }
  return true;
}

int create_temp_file(const std::string& dir, const TempLevels& levels, std::string& name) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    name = hashed_temp_name(dir, levels, next_temp_number());
    int fd = ::open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno == ENOENT) {
      // A folder not made yet (each number may hash to another one).
      if (!make_temp_folders(dir, levels, name)) return -1;
      fd = ::open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    }
    if (fd >= 0) return fd;
    if (errno != EEXIST) return -1;
  }
  return -1;
}

}  // namespace torii::core
