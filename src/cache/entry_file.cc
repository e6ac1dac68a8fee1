#include "cache/entry_file.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace torii::cache {

namespace {

constexpr char kMagic[8] = {'T', 'O', 'R', 'I', 'I', 'C', 0, 1};
constexpr uint32_t kVersion = 1;
constexpr size_t kMaxText = 1 << 20;  // no key, Vary or head of ours is this long

// Fixed-size, written first. valid_sec and date_sec stay outside the
// checksum: a revalidation rewrites them in place.
struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t key_len;
  uint32_t vary_len;
  uint32_t etag_len;
  uint32_t head_len;
  uint32_t checksum;
  int64_t body_length;  // -1 until the body is complete
  int64_t last_modified;
  int64_t stale_while_revalidate;
  int64_t stale_if_error;
  uint8_t variant[16];
  int64_t valid_sec;
  int64_t date_sec;
};

uint32_t checksum_of(const FileHeader& h, std::string_view key, std::string_view vary, std::string_view etag,
                     std::string_view head) {
  FileHeader copy = h;
  copy.checksum = 0;
  copy.valid_sec = 0;
  copy.date_sec = 0;
  uLong crc = crc32(0, nullptr, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(&copy), sizeof copy);
  for (std::string_view s : {key, vary, etag, head})
    crc = crc32(crc, reinterpret_cast<const Bytef*>(s.data()), uInt(s.size()));
  return uint32_t(crc);
}

bool write_all(int fd, const void* data, size_t n, int64_t offset) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, offset);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
    offset += w;
  }
  return true;
}

FileHeader header_for(const EntryMeta& m, int64_t body_length) {
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.key_len = uint32_t(m.key.size());
  h.vary_len = uint32_t(m.vary.size());
  h.etag_len = uint32_t(m.etag.size());
  h.head_len = uint32_t(m.head.size());
  h.body_length = body_length;
  h.last_modified = m.last_modified;
  h.stale_while_revalidate = m.stale_while_revalidate;
  h.stale_if_error = m.stale_if_error;
  std::memcpy(h.variant, m.variant.data(), 16);
  h.valid_sec = m.valid_sec;
  h.date_sec = m.date_sec;
  h.checksum = checksum_of(h, m.key, m.vary, m.etag, m.head);
  return h;
}

int64_t round_to_block(int64_t bytes) { return (bytes + 4095) / 4096 * 4096; }

// Reads and checks the fixed header; false when the file is not a complete entry.
bool read_header(int fd, int64_t file_size, FileHeader& h) {
  if (file_size < int64_t(sizeof h)) return false;
  if (!http::read_exact(fd, reinterpret_cast<char*>(&h), sizeof h, 0)) return false;
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.version != kVersion) return false;
  if (h.key_len > kMaxText || h.vary_len > kMaxText || h.etag_len > kMaxText || h.head_len > kMaxText) return false;
  if (h.body_length < 0) return false;  // never committed
  const int64_t body_offset = int64_t(sizeof h) + h.key_len + h.vary_len + h.etag_len + h.head_len;
  // Compared without adding: a damaged length may be near INT64_MAX.
  return body_offset <= file_size && h.body_length == file_size - body_offset;
}

}  // namespace

Md5 md5_of(std::string_view data) {
  Md5 out{};
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out.data(), &len, EVP_md5(), nullptr);
  return out;
}

std::string hex(const Md5& m) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(32, '0');
  for (size_t i = 0; i < 16; ++i) {
    s[2 * i] = kDigits[m[i] >> 4];
    s[2 * i + 1] = kDigits[m[i] & 15];
  }
  return s;
}

int64_t Entry::disk_bytes() const { return round_to_block(body_offset + body_length); }

bool EntryWriter::open(const std::string& temp, const EntryMeta& meta) {
  temp_ = temp;
  meta_ = meta;
  fd_ = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    failed_ = true;
    return false;
  }
  const FileHeader h = header_for(meta, -1);
  std::string first(reinterpret_cast<const char*>(&h), sizeof h);
  first += meta.key;
  first += meta.vary;
  first += meta.etag;
  first += meta.head;
  body_offset_ = int64_t(first.size());
  if (!write_all(fd_, first.data(), first.size(), 0)) {
    failed_ = true;
    return false;
  }
  return true;
}

bool EntryWriter::append(std::string_view body) {
  if (failed_ || fd_ < 0) return false;
  if (!write_all(fd_, body.data(), body.size(), body_offset_ + body_length_)) {
    failed_ = true;
    return false;
  }
  body_length_ += int64_t(body.size());
  return true;
}

std::shared_ptr<const Entry> EntryWriter::commit(const std::string& final_path) {
  if (failed_ || temp_.empty()) return nullptr;
  if (fd_ >= 0) {
    const FileHeader h = header_for(meta_, body_length_);
    if (!write_all(fd_, &h, sizeof h, 0)) {
      failed_ = true;
      return nullptr;
    }
    ::close(fd_);
    fd_ = -1;
  }
  // A failed rename may be tried again (the caller makes the directories).
  if (::rename(temp_.c_str(), final_path.c_str()) != 0) return nullptr;
  temp_.clear();  // nothing left to remove
  bool bad = false;
  return read_entry(final_path, bad);
}

EntryWriter::~EntryWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

std::shared_ptr<const Entry> read_entry(const std::string& path, bool& bad) {
  bad = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  auto file = std::make_shared<http::OpenFile>();
  file->fd = fd;  // closed with the OpenFile
  struct stat st{};
  if (::fstat(fd, &st) != 0) return nullptr;
  file->size = st.st_size;
  file->mtime = st.st_mtime;
  file->inode = st.st_ino;
  FileHeader h{};
  if (!read_header(fd, st.st_size, h)) {
    bad = true;
    return nullptr;
  }
  std::string text(size_t(h.key_len) + h.vary_len + h.etag_len + h.head_len, '\0');
  if (!text.empty() && !http::read_exact(fd, text.data(), text.size(), int64_t(sizeof h))) {
    bad = true;
    return nullptr;
  }
  auto e = std::make_shared<Entry>();
  std::string_view t = text;
  e->key = t.substr(0, h.key_len);
  e->vary = t.substr(h.key_len, h.vary_len);
  e->etag = t.substr(size_t(h.key_len) + h.vary_len, h.etag_len);
  e->head = t.substr(size_t(h.key_len) + h.vary_len + h.etag_len, h.head_len);
  if (checksum_of(h, e->key, e->vary, e->etag, e->head) != h.checksum) {
    bad = true;
    return nullptr;
  }
  std::memcpy(e->variant.data(), h.variant, 16);
  e->body_offset = int64_t(sizeof h) + int64_t(text.size());
  e->body_length = h.body_length;
  e->valid_sec = h.valid_sec;
  e->date_sec = h.date_sec;
  e->last_modified = h.last_modified;
  e->stale_while_revalidate = h.stale_while_revalidate;
  e->stale_if_error = h.stale_if_error;
  e->file = std::move(file);
  return e;
}

bool seal_entry_bytes(std::string& bytes) {
  FileHeader h{};
  if (bytes.size() < sizeof h) return false;
  std::memcpy(&h, bytes.data(), sizeof h);
  const uint64_t text = uint64_t(h.key_len) + h.vary_len + h.etag_len + h.head_len;
  if (text > bytes.size() - sizeof h) return false;
  std::string_view t(bytes.data() + sizeof h, size_t(text));
  h.checksum = checksum_of(h, t.substr(0, h.key_len), t.substr(h.key_len, h.vary_len),
                           t.substr(size_t(h.key_len) + h.vary_len, h.etag_len),
                           t.substr(size_t(h.key_len) + h.vary_len + h.etag_len, h.head_len));
  std::memcpy(bytes.data() + offsetof(FileHeader, checksum), &h.checksum, sizeof h.checksum);
  return true;
}

bool read_summary(const std::string& path, EntrySummary& out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st{};
  FileHeader h{};
  const bool ok = ::fstat(fd, &st) == 0 && read_header(fd, st.st_size, h);
  ::close(fd);
  if (!ok) return false;
  out.valid_sec = h.valid_sec;
  out.disk_bytes = round_to_block(st.st_size);
  return true;
}

bool rewrite_validity(const Entry& e, const std::string& path, int64_t valid_sec, int64_t date_sec) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st{};
  // Only the file the entry was read from: a newer one may have replaced it.
  bool ok = ::fstat(fd, &st) == 0 && uint64_t(st.st_ino) == e.file->inode;
  if (ok) {
    const int64_t times[2] = {valid_sec, date_sec};
    ok = write_all(fd, times, sizeof times, int64_t(offsetof(FileHeader, valid_sec)));
  }
  ::close(fd);
  return ok;
}

}  // namespace torii::cache
