// libFuzzer target for the WebDAV extension's lock fields (modules/dav_ext/
// lock_headers): any bytes as an If header, a Lock-Token value, a
// Destination and the XML text a file name becomes. The first byte picks
// the request's URI among a few; the readers never look past their input
// (ASan would say), a token that comes back is one the input spelled out,
// and the escaped text holds nothing an XML document may not.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/xml_escape.h"
#include "modules/dav_ext/lock_headers.h"

namespace dav_ext = torii::dav_ext;

namespace {

bool spelled_out(std::string_view text, uint32_t token) {
  std::string urn;
  dav_ext::append_token(urn, token, false);
  // The digits may be in either case.
  for (size_t i = 0; i + urn.size() <= text.size(); ++i) {
    bool same = true;
    for (size_t k = 0; k < urn.size() && same; ++k) same = (text[i + k] | 0x20) == (urn[k] | 0x20);
    if (same) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static constexpr std::string_view kUris[] = {"/", "/dav/", "/dav/a.txt", "/dav/d/e/"};
  const std::string_view uri = size > 0 ? kUris[data[0] % 4] : kUris[0];
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const dav_ext::Origin origin{"localhost", size > 0 && (data[0] & 4) != 0};

  if (uint32_t t = dav_ext::if_header_token(text, "/dav/a.txt", uri, origin); t != 0 && !spelled_out(text, t))
    std::abort();
  if (uint32_t t = dav_ext::lock_token_value(text); t != 0 && !spelled_out(text, t)) std::abort();
  if (auto path = dav_ext::local_path(text, origin)) {
    if (path->empty() || (*path)[0] != '/' || path->data() < text.data() ||
        path->data() + path->size() > text.data() + text.size())
      std::abort();
  }

  std::string xml;
  torii::core::append_xml_escaped(xml, text);
  for (size_t i = 0; i < xml.size();) {
    const auto c = static_cast<unsigned char>(xml[i]);
    if (c == '<' || c == '>' || c == '"' || (c < 0x20 && c != '\t' && c != '\n' && c != '\r')) std::abort();
    const size_t n = torii::core::utf8_sequence_length(xml, i);
    if (n == 0) std::abort();
    i += n;
  }
  return 0;
}
