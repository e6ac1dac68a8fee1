// One cache entry on disk: a fixed header, the key, the upstream's Vary
// names, the validators, the response head as text, then the body:
//
//   FileHeader | key | vary | etag | head | body
//
// A file is written under a temporary name and renamed into place only
// once complete, so a reader never meets a torn one; the header still
// carries a magic, a version, a checksum of the metadata and the body's
// length, and a file whose size does not match is refused (and removed).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "http/response.h"

namespace torii::cache {

using Md5 = std::array<uint8_t, 16>;

Md5 md5_of(std::string_view data);
std::string hex(const Md5& m);

// What is known of a stored response, with its file open.
struct Entry {
  std::shared_ptr<const http::OpenFile> file;
  std::string key;
  std::string vary;  // the upstream's Vary field, as sent ("" without one)
  Md5 variant{};     // of the request fields Vary names, when vary is set
  std::string etag;
  std::string head;  // "HTTP/1.1 200 OK\r\nName: value\r\n...\r\n"
  int64_t body_offset = 0;
  int64_t body_length = 0;
  int64_t valid_sec = 0;       // fresh until (unix seconds)
  int64_t date_sec = 0;        // stored at
  int64_t last_modified = -1;  // the upstream's Last-Modified, -1: none
  // RFC 5861: how long past valid_sec the entry may still be served while
  // it is revalidated, or when the upstream fails.
  int64_t stale_while_revalidate = 0;
  int64_t stale_if_error = 0;
  int64_t disk_bytes() const;
};

// The metadata of a new entry, before its body.
struct EntryMeta {
  std::string key;
  std::string vary;
  Md5 variant{};
  std::string etag;
  std::string head;
  int64_t valid_sec = 0;
  int64_t date_sec = 0;
  int64_t last_modified = -1;
  int64_t stale_while_revalidate = 0;
  int64_t stale_if_error = 0;
};

// Writes one entry into a temporary file; commit() renames it into place.
// Destroyed without a commit, it removes the temporary file.
class EntryWriter {
 public:
  // Opens `temp` for writing and writes the metadata; false (errno set) on failure.
  bool open(const std::string& temp, const EntryMeta& meta);
  bool append(std::string_view body);
  // The body is complete: fixes its length in the header, renames the file
  // to `final_path` and returns the entry (opened for reading), or null.
  std::shared_ptr<const Entry> commit(const std::string& final_path);
  ~EntryWriter();
  bool failed() const { return failed_; }
  int64_t written() const { return body_length_; }

 private:
  int fd_ = -1;
  std::string temp_;
  EntryMeta meta_;
  int64_t body_offset_ = 0;
  int64_t body_length_ = 0;
  bool failed_ = false;
};

// Opens and checks an entry's file. Null when it is missing, torn or not
// ours; `bad` is set when a file exists but cannot be trusted (the caller
// removes it).
std::shared_ptr<const Entry> read_entry(const std::string& path, bool& bad);

// Sets the metadata checksum in an entry file's bytes, as the writer
// does, when they hold the fixed header and the texts it announces (false
// otherwise): the fuzz target uses it to reach what the checksum guards.
bool seal_entry_bytes(std::string& bytes);

// Only the header's facts, for the loader: validity and disk size.
struct EntrySummary {
  int64_t valid_sec = 0;
  int64_t disk_bytes = 0;
};
bool read_summary(const std::string& path, EntrySummary& out);

// The same entry with a new validity (a 304 revalidated it): the header is
// rewritten in place (a fixed-size field), so a reader sees old or new.
bool rewrite_validity(const Entry& e, const std::string& path, int64_t valid_sec, int64_t date_sec);

}  // namespace torii::cache
