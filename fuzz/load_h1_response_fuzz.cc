// libFuzzer target for torii-load's HTTP/1.1 response reader, which reads
// whatever a server under test sends.
//
// The input is read as a stream of pipelined responses twice: whole, and in
// pieces whose sizes come from the input's first byte. How the bytes are cut
// must not change anything: the same responses complete with the same
// statuses, and the same error (if any) stops both readings. Each call uses
// no more bytes than it was given.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "load/h1_response_reader.h"

using torii::load::H1ResponseReader;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

struct Outcome {
  std::vector<int> statuses;  // completed responses
  bool failed = false;
  bool operator==(const Outcome&) const = default;
};

// Reads `bytes` as consecutive responses to GET (or HEAD, by the flag),
// feeding at most `step` bytes per call.
Outcome read_all(const std::string& bytes, size_t step, bool head) {
  Outcome out;
  H1ResponseReader reader(4096);
  reader.begin(head);
  size_t pos = 0;
  while (pos < bytes.size()) {
    size_t n = std::min(step, bytes.size() - pos);
    size_t used = reader.feed(bytes.data() + pos, n);
    check(used <= n);
    pos += used;
    if (reader.state() == H1ResponseReader::State::error) {
      out.failed = true;
      return out;
    }
    if (reader.state() == H1ResponseReader::State::done) {
      out.statuses.push_back(reader.status());
      reader.begin(head);
      continue;
    }
    check(used == n);  // not done: it took everything offered
  }
  reader.on_eof();
  if (reader.state() == H1ResponseReader::State::done) out.statuses.push_back(reader.status());
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  size_t step = size_t(data[0] % 64) + 1;
  bool head = data[1] & 1;
  std::string bytes(reinterpret_cast<const char*>(data + 2), size - 2);
  Outcome whole = read_all(bytes, bytes.size() + 1, head);
  Outcome pieces = read_all(bytes, step, head);
  check(whole == pieces);
  for (int status : whole.statuses) check(status >= 100 && status <= 999);
  return 0;
}
