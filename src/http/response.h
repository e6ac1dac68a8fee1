// The protocol-neutral response head and the sink a handler writes into.
// The codec under the sink serialises; the handler never sees the protocol.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace torii::http {

struct ResponseHead {
  int status = 200;
  // The upstream's reason phrase, which HTTP/1.1 relays as nginx does (a
  // custom code's own words), while the status is still the one it came
  // with (`reason_status`); else the standard phrase.
  std::string reason;
  int reason_status = 0;
  // Owned: values are often computed (dates, lengths, template output).
  std::vector<std::pair<std::string, std::string>> headers;
  int64_t content_length = -1;  // -1: unknown (HTTP/1.1 uses chunked)
  // The upstream's Server or Date is among `headers` (proxy_pass_header):
  // it goes out instead of ours. Set by the proxy, so that other responses
  // need no search for them.
  bool has_upstream_server_or_date = false;
  // The upstream's X-Accel-Limit-Rate (bytes a second), set by the proxy;
  // -1: none. Exchange::send_head makes it the response's $limit_rate.
  int64_t accel_limit_rate = -1;
  // The upstream's X-Accel-Charset, set by the proxy; empty: none.
  // Exchange::send_head adds it to the Content-Type (charset module).
  std::string accel_charset;

  // Each string is built once, in place (a literal name is not first made
  // a temporary std::string and then moved).
  template <class Name, class Value>
  void add(Name&& name, Value&& value) {
    headers.emplace_back(std::forward<Name>(name), std::forward<Value>(value));
  }
  // Case-insensitive lookups used by header filters.
  const std::string* find(std::string_view name) const;
  void remove(std::string_view name);
  void set(std::string name, std::string value) {
    remove(name);
    add(std::move(name), std::move(value));
  }
};

// A file's bytes read into memory: a buffer that is not zeroed before the
// read fills it (a std::string would be, at a cost of one memset per
// response of a file read per request).
class FileBytes {
 public:
  FileBytes() = default;
  FileBytes(std::unique_ptr<char[]> bytes, size_t size) : bytes_(std::move(bytes)), size_(size) {}
  static FileBytes copy_of(std::string_view s) {
    auto bytes = std::make_unique_for_overwrite<char[]>(s.size());
    s.copy(bytes.get(), s.size());
    return {std::move(bytes), s.size()};
  }
  const char* data() const { return bytes_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  operator std::string_view() const { return {bytes_.get(), size_}; }

 private:
  std::unique_ptr<char[]> bytes_;
  size_t size_ = 0;
};

// An open file shared by the open-file cache and responses in flight; the
// descriptor closes when the last user lets go.
struct OpenFile {
  int fd = -1;
  int64_t size = 0;
  int64_t mtime = 0;  // seconds since the epoch
  uint64_t inode = 0;
  bool is_dir = false;
  // The whole file, when the open-file cache keeps a small file's bytes
  // (read once when the entry was made); empty otherwise. Writers that need
  // the bytes in memory (TLS, HTTP/2, sendfile off) take them from here
  // instead of a pread per response.
  FileBytes content;
  bool has_content() const { return !content.empty(); }
  ~OpenFile();
};

// Reads exactly `n` bytes of `fd` at `offset` (pread, retried on EINTR and
// short reads). False on an error or a file now shorter (errno EIO then).
bool read_exact(int fd, char* buf, size_t n, int64_t offset);

// A filter changed the body's bytes: a strong ETag turns weak and anything
// that is not a valid tag is dropped (nginx's ngx_http_weak_etag).
void weaken_etag(ResponseHead& head);

// A handler that consumes the request body (the proxy) implements this.
class BodyReader {
 public:
  virtual ~BodyReader() = default;
  // A piece of the decoded body. The reader must take all of it; returning
  // false asks the codec to stop reading until resume_body().
  virtual bool on_body_data(std::string_view data) = 0;
  virtual void on_body_end() = 0;
};

// The codec's side of one exchange: the response going out and the request
// body coming in. Handlers reach it only through http::Exchange.
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
  // Trailer fields to send after the body (before finish()); a codec that
  // cannot carry them drops them (HTTP/2 sends them: gRPC's grpc-status).
  virtual void set_trailers(std::vector<std::pair<std::string, std::string>> trailers) {}
  // A 103 Early Hints ahead of the response (its fields only; early_hints);
  // a codec that cannot send one ignores it.
  virtual void send_interim(const ResponseHead& head) {}
  // The response cannot be completed (the upstream failed mid-body): end
  // it without its terminating chunk and close the connection once the
  // queued bytes are out, so the client sees a truncated response. After a
  // 101 this ends the tunnel.
  virtual void abort() { finish(); }

  // Starts handing the request body to `reader` (bytes already received
  // first). Without a reader, the codec reads and drops the body.
  virtual void read_body(BodyReader* reader) { reader->on_body_end(); }
  virtual void resume_body() {}
  // Response bytes queued and not yet written: a streaming handler stops
  // producing above a limit and waits for the drain callback.
  virtual size_t queued_bytes() const { return 0; }
  // Called (on the loop's thread, never inside the handler's own call)
  // when the queue has drained below the low mark. One-shot.
  virtual void set_drain_callback(std::function<void()> cb) {}
};

// Standard reason phrase, or "Unknown".
std::string_view reason_phrase(int status);

}  // namespace torii::http
