// libFuzzer target for the cache's on-disk entry reader: a file in the
// cache directory may be torn, foreign or damaged, and the loader and the
// lookups read whatever is there.
//
// The input is the file's bytes, behind one byte of flags: bit 0 seals the
// metadata checksum first (as the writer would), so the checks behind it
// are reached too. The reader must refuse or accept without crashing, and
// an accepted entry must describe the file exactly: its texts and body fit
// the file, the loader's summary agrees, and its stored head is what
// send_entry can parse (or refuses cleanly).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cache/entry_file.h"
#include "http1/response_parser.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

// The bytes as a file: a memory file reached by its /proc path, so every
// run reads a real descriptor as the cache does, with no disk.
class MemoryFile {
 public:
  explicit MemoryFile(const std::string& bytes) : fd_(::memfd_create("cache-entry", MFD_CLOEXEC)) {
    check(fd_ >= 0);
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      check(n > 0);
      done += size_t(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { ::close(fd_); }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (flags & 1) torii::cache::seal_entry_bytes(bytes);
  MemoryFile file(bytes);

  bool bad = false;
  auto entry = torii::cache::read_entry(file.path(), bad);
  torii::cache::EntrySummary summary;
  const bool summarised = torii::cache::read_summary(file.path(), summary);
  if (!entry) return 0;

  check(!bad);
  const torii::cache::Entry& e = *entry;
  check(e.file && e.file->size == int64_t(bytes.size()));
  check(e.body_length >= 0 && e.body_offset >= 0 && e.body_offset + e.body_length == int64_t(bytes.size()));
  const size_t texts = e.key.size() + e.vary.size() + e.etag.size() + e.head.size();
  // The texts start after the fixed header, inside the file or at its end
  // (an entry of no texts and no body is the header alone).
  check(size_t(e.body_offset) >= texts && size_t(e.body_offset) - texts <= bytes.size());
  check(bytes.compare(size_t(e.body_offset) - e.head.size(), e.head.size(), e.head) == 0);
  // The loader learns the same validity as a lookup.
  check(summarised && summary.valid_sec == e.valid_sec && summary.disk_bytes >= int64_t(bytes.size()));

  // What send_entry does with the stored head.
  torii::http1::ResponseParser parser(e.head.size() + 1, 1000);
  torii::http1::ParsedResponse r;
  size_t consumed = 0;
  const auto st = parser.parse(e.head, r, consumed);
  if (st == torii::http1::ParseStatus::done) check(consumed <= e.head.size() && r.status >= 100 && r.status <= 999);
  if (st == torii::http1::ParseStatus::error) check(parser.error() && *parser.error());
  return 0;
}
