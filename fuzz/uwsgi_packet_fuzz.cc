// libFuzzer target for the uwsgi packet: any bytes parsed as a packet must
// stay inside what was given, and vars built from the input (split at zero
// bytes into keys and values) must parse back to the same pairs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "upstream/uwsgi/packet.h"

namespace uwsgi = torii::upstream::uwsgi;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  uint8_t m1 = 0;
  uint8_t m2 = 0;
  size_t consumed = 0;
  size_t seen = 0;
  if (uwsgi::parse_packet(in, m1, m2, consumed, [&](std::string_view k, std::string_view v) {
        seen += k.size() + v.size() + 4;
      })) {
    check(consumed <= in.size() && seen + uwsgi::kHeaderSize == consumed);
  }

  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  std::string_view rest = in;
  while (!rest.empty()) {
    size_t z = rest.find('\0');
    std::string_view key = rest.substr(0, z);
    rest = z == std::string_view::npos ? std::string_view() : rest.substr(z + 1);
    size_t z2 = rest.find('\0');
    std::string_view value = rest.substr(0, z2);
    rest = z2 == std::string_view::npos ? std::string_view() : rest.substr(z2 + 1);
    pairs.emplace_back(key, value);
  }
  std::string packet;
  uwsgi::PacketBuilder b(packet);
  for (const auto& [k, v] : pairs) check(b.add(k, v));
  const uint8_t want1 = size ? data[0] : 0;
  if (!b.finish(want1, 7)) return 0;
  size_t i = 0;
  check(uwsgi::parse_packet(packet, m1, m2, consumed, [&](std::string_view k, std::string_view v) {
    check(i < pairs.size() && pairs[i].first == k && pairs[i].second == v);
    ++i;
  }));
  check(i == pairs.size() && m1 == want1 && m2 == 7 && consumed == packet.size());
  return 0;
}
