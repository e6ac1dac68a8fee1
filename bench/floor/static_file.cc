#include "static_file.h"

#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

namespace floor_bench {
namespace {

class StaticConn final : public Handler {
 public:
  StaticConn(Loop& loop, int fd, const StaticSite& site) : loop_(loop), fd_(fd), site_(site) {}

  void on_event(uint32_t events) override {
    if (fd_ < 0) return;
    if (events & (EPOLLERR | EPOLLHUP)) return close_now();
    if ((events & EPOLLIN) && !read_requests()) return close_now();
    if (!send_owed()) close_now();
  }

 private:
  // Reads until a short read (the socket is then empty: no read that only
  // says EAGAIN) and counts the request heads completed.
  bool read_requests() {
    while (true) {
      const size_t asked = sizeof in_ - len_;
      ssize_t n = recv(fd_, in_ + len_, asked, 0);
      if (n == 0) return false;
      if (n < 0) return errno == EAGAIN || errno == EINTR;
      len_ += size_t(n);
      std::string_view data(in_, len_);
      size_t start = 0;
      for (size_t end; (end = data.find("\r\n\r\n", start)) != std::string_view::npos; start = end + 4) ++owed_;
      if (start == 0 && len_ == sizeof in_) return false;  // a head larger than the buffer
      memmove(in_, in_ + start, len_ - start);
      len_ -= start;
      if (size_t(n) < asked) return true;
    }
  }

  // Head with MSG_MORE, then the file, as torii sends them; stops at EAGAIN
  // and goes on at the next EPOLLOUT edge.
  bool send_owed() {
    while (owed_ > 0) {
      if (head_off_ < site_.head.size()) {
        ssize_t n = send(fd_, site_.head.data() + head_off_, site_.head.size() - head_off_, MSG_NOSIGNAL | MSG_MORE);
        if (n < 0) return errno == EAGAIN || errno == EINTR;
        head_off_ += size_t(n);
        if (head_off_ < site_.head.size()) return true;
      }
      if (file_ < 0) {
        file_ = site_.open_each ? open(site_.path.c_str(), O_RDONLY | O_CLOEXEC) : site_.file_fd;
        struct stat st;
        if (file_ < 0 || (site_.open_each && fstat(file_, &st) < 0)) return false;
      }
      while (file_off_ < site_.size) {
        ssize_t n = sendfile(fd_, file_, &file_off_, size_t(site_.size - file_off_));
        if (n <= 0) return n < 0 && (errno == EAGAIN || errno == EINTR);
      }
      if (site_.open_each) close(file_);
      file_ = -1;
      file_off_ = 0;
      head_off_ = 0;
      --owed_;
    }
    return true;
  }

  void close_now() {
    if (file_ >= 0 && site_.open_each) close(file_);
    close(fd_);
    fd_ = -1;
    loop_.retire(this);
  }

  Loop& loop_;
  int fd_;
  const StaticSite& site_;
  char in_[4096];
  size_t len_ = 0;
  int owed_ = 0;  // complete request heads not yet answered
  size_t head_off_ = 0;
  int file_ = -1;
  off_t file_off_ = 0;
};

}  // namespace

void serve_static(Loop& loop, int fd, const StaticSite& site) {
  loop.add(fd, new StaticConn(loop, fd, site), EPOLLIN | EPOLLOUT | EPOLLRDHUP);
}

}  // namespace floor_bench
