// libFuzzer target for memcached's reply (upstream/memcached/reply): the
// first line of any bytes, with and without reading the flags, must give a
// line inside the input or an error naming it; and the value reader fed
// the rest in two pieces must hand on exactly the value's bytes that came,
// never more, and call the reply done only when value and trailer are
// exactly what came.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "upstream/memcached/key.h"
#include "upstream/memcached/reply.h"

namespace mc = torii::upstream::memcached;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  // The first byte picks the key's length and whether flags are read.
  const size_t key_len = data[0] & 0x0f;
  const bool read_flags = data[0] & 0x10;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string key;
  mc::append_escaped_key(in.substr(0, key_len), key);
  for (const char c : key) check(static_cast<unsigned char>(c) > 0x20 && c != '\r' && c != '\n');

  mc::ReplyLine line;
  std::string error;
  const auto st = mc::parse_reply_line(in, key, read_flags, line, error);
  if (st == mc::LineStatus::need_more) {
    check(in.find('\n') == std::string_view::npos);
    return 0;
  }
  if (st == mc::LineStatus::error) {
    check(error.rfind("memcached sent invalid ", 0) == 0);
    return 0;
  }
  check(line.size <= in.size() && in[line.size - 1] == '\n');
  if (line.kind == mc::ReplyLine::Kind::miss) {
    check(in.substr(0, line.size) == "END\r\n");
    return 0;
  }
  check(line.length >= 0);
  const std::string_view rest = in.substr(line.size);
  mc::ValueReader reader(line.length);
  const size_t cut = rest.size() / 2;
  std::string value;
  bool done = false, bad = false;
  for (const std::string_view piece : {rest.substr(0, cut), rest.substr(cut)}) {
    if (bad) break;
    std::string_view v;
    const auto r = reader.feed(piece, v);
    check(v.size() <= piece.size() && (v.empty() || v.data() == piece.data()));
    value.append(v);
    done = r == mc::ValueReader::Status::done;
    bad = r == mc::ValueReader::Status::bad_trailer;
  }
  check(int64_t(value.size()) <= line.length);
  check(value == rest.substr(0, value.size()));
  if (done) {
    check(int64_t(rest.size()) == line.length + int64_t(mc::ValueReader::kTrailer.size()));
    check(rest.substr(size_t(line.length)) == mc::ValueReader::kTrailer);
  }
  return 0;
}
