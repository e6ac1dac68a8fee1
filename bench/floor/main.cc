// torii-floor: what the kernel and a bare epoll loop cost for the bytes of
// bench/run's plain rows, as the floor torii's CPU per request is compared
// with. One thread; every listener on the one loop.
//
//   torii-floor [--static ADDR:PORT FILE HEAD_FILE [--open-each]]...
//               [--forward ADDR:PORT BACKEND[,BACKEND...]]...
//
// --static answers every request with HEAD_FILE's bytes (the response head
// torii sends for FILE, captured by bench/run) and FILE by sendfile;
// --open-each opens and stats the file per response, as torii does without
// open_file_cache. --forward pairs each client connection with a backend
// connection and copies bytes both ways (see forward.h).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "forward.h"
#include "loop.h"
#include "static_file.h"

using namespace floor_bench;

namespace {

[[noreturn]] void usage(const char* why) {
  fprintf(stderr,
          "torii-floor: %s\nusage: torii-floor [--static ADDR:PORT FILE HEAD_FILE [--open-each]]... "
          "[--forward ADDR:PORT BACKEND[,BACKEND...]]...\n",
          why);
  exit(2);
}

sockaddr_in parse_addr(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos) usage(("not ADDR:PORT: " + text).c_str());
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(atoi(text.c_str() + colon + 1)));
  if (inet_pton(AF_INET, text.substr(0, colon).c_str(), &a.sin_addr) != 1) usage(("not an IPv4 address: " + text).c_str());
  return a;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) usage(("cannot read " + path).c_str());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A listening socket: level-triggered, one accept per event (as torii's
// multi_accept off), so nothing reads EAGAIN from it.
class Listener final : public Handler {
 public:
  Listener(Loop& loop, const sockaddr_in& addr, StaticSite* st, ForwardSite* fw) : loop_(loop), st_(st), fw_(fw) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) < 0 || listen(fd_, 4096) < 0) {
      perror("bind/listen");
      exit(1);
    }
    loop.add(fd_, this, EPOLLIN, /*level=*/true);
  }
  void on_event(uint32_t) override {
    int fd = accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    if (st_) {
      int one = 1;  // keep-alive: the last segment must not wait for an ACK
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      serve_static(loop_, fd, *st_);
    } else {
      forward(loop_, fd, *fw_);
    }
  }

 private:
  Loop& loop_;
  int fd_;
  StaticSite* st_;
  ForwardSite* fw_;
};

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  Loop loop;
  int listeners = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--static" && i + 3 < argc) {
      auto* site = new StaticSite;
      sockaddr_in addr = parse_addr(argv[++i]);
      site->path = argv[++i];
      site->head = read_file(argv[++i]);
      if (i + 1 < argc && std::string(argv[i + 1]) == "--open-each") {
        site->open_each = true;
        ++i;
      }
      site->file_fd = open(site->path.c_str(), O_RDONLY | O_CLOEXEC);
      struct stat st;
      if (site->file_fd < 0 || fstat(site->file_fd, &st) < 0) usage(("cannot open " + site->path).c_str());
      site->size = st.st_size;
      new Listener(loop, addr, site, nullptr);
      ++listeners;
    } else if (arg == "--forward" && i + 2 < argc) {
      auto* site = new ForwardSite;
      sockaddr_in addr = parse_addr(argv[++i]);
      std::string list = argv[++i];
      for (size_t start = 0; start <= list.size();) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        site->backends.push_back(parse_addr(list.substr(start, comma - start)));
        start = comma + 1;
      }
      new Listener(loop, addr, nullptr, site);
      ++listeners;
    } else {
      usage(("unexpected argument or missing values: " + arg).c_str());
    }
  }
  if (listeners == 0) usage("nothing to listen on");
  loop.run();
}
