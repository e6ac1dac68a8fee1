// libFuzzer target for the PROPFIND body reader (modules/dav_ext/
// propfind_body): any bytes as a request body go through libxml2 and the
// element walk; the answer is a set of the known property bits or a
// refusal, never a crash or a leak (ASan's leak check runs at exit).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "modules/dav_ext/propfind_body.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const auto props = torii::dav_ext::parse_propfind_body(body);
  if (size == 0 && props != torii::dav_ext::all_properties) std::abort();
  return 0;
}
