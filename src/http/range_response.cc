#include "http/range_response.h"

#include <chrono>
#include <cstdio>

#include "http/exchange.h"

namespace torii::http {

namespace {

// A boundary unlikely to appear in the file: a per-thread counter mixed
// with the thread's address space position, as 20 digits.
std::string make_boundary() {
  thread_local uint64_t counter =
      static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&counter)) * 0x9E3779B97F4A7C15ull ^
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  counter = counter * 6364136223846793005ull + 1442695040888963407ull;
  char buf[24];
  std::snprintf(buf, sizeof buf, "%020llu", static_cast<unsigned long long>(counter));
  return buf;
}

}  // namespace

std::string content_range(const ByteRange& r, int64_t size) {
  char buf[80];
  const int n = std::snprintf(buf, sizeof buf, "bytes %lld-%lld/%lld", static_cast<long long>(r.start),
                              static_cast<long long>(r.end - 1), static_cast<long long>(size));
  return std::string(buf, static_cast<size_t>(n));
}

void send_multipart(Exchange& ex, ResponseHead head, const std::shared_ptr<const OpenFile>& file, int64_t base,
                    int64_t size, std::string_view type, const std::vector<ByteRange>& ranges) {
  const std::string boundary = make_boundary();
  std::vector<std::string> part_heads;
  part_heads.reserve(ranges.size());
  int64_t total = 0;
  for (const ByteRange& r : ranges) {
    std::string p;
    p.reserve(96 + type.size());
    p.append("\r\n--").append(boundary).append("\r\n");
    if (!type.empty()) p.append("Content-Type: ").append(type).append("\r\n");
    p.append("Content-Range: ").append(content_range(r, size)).append("\r\n\r\n");
    total += static_cast<int64_t>(p.size()) + r.length();
    part_heads.push_back(std::move(p));
  }
  const std::string tail = "\r\n--" + boundary + "--\r\n";
  total += static_cast<int64_t>(tail.size());

  head.status = 206;
  std::string multipart_type = "multipart/byteranges; boundary=" + boundary;
  bool replaced = false;
  for (auto& [name, value] : head.headers) {
    if (name == "Content-Type") {
      value = std::move(multipart_type);
      replaced = true;
      break;
    }
  }
  if (!replaced) head.add("Content-Type", std::move(multipart_type));
  head.content_length = total;
  ex.send_head(std::move(head));
  for (size_t i = 0; i < ranges.size(); ++i) {
    ex.send_body(part_heads[i]);
    ex.send_file(file, base + ranges[i].start, ranges[i].length());
  }
  ex.send_body(tail);
  ex.finish();
}

}  // namespace torii::http
