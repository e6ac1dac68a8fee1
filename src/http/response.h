// The protocol-neutral response head and the sink a handler writes into.
// The codec under the sink serialises; the handler never sees the protocol.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace torii::http {

struct ResponseHead {
  int status = 200;
  // Owned: values are often computed (dates, lengths, template output).
  std::vector<std::pair<std::string, std::string>> headers;
  int64_t content_length = -1;  // -1: unknown (HTTP/1.1 uses chunked)

  void add(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
  }
  // Case-insensitive lookups used by header filters.
  const std::string* find(std::string_view name) const;
  void remove(std::string_view name);
  void set(std::string name, std::string value) {
    remove(name);
    add(std::move(name), std::move(value));
  }
};

// An open file shared by the open-file cache and responses in flight; the
// descriptor closes when the last user lets go.
struct OpenFile {
  int fd = -1;
  int64_t size = 0;
  int64_t mtime = 0;  // seconds since the epoch
  uint64_t inode = 0;
  bool is_dir = false;
  ~OpenFile();
};

class ResponseSink {
 public:
  virtual ~ResponseSink() = default;
  // The exchange keeps the head alive until finish().
  virtual void send_head(const ResponseHead& head) = 0;
  // Body bytes; the sink copies them.
  virtual void send_body(std::string_view data) = 0;
  // A file range; the sink keeps the file alive until it is written.
  virtual void send_file(std::shared_ptr<const OpenFile> file, int64_t offset, int64_t length) = 0;
  // No more body.
  virtual void finish() = 0;
};

// Standard reason phrase, or "Unknown".
std::string_view reason_phrase(int status);

}  // namespace torii::http
