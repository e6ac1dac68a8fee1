// Feeds arbitrary bytes to the config compiler as the text of a main file:
// lexer, parser, directive table, setters and listen groups. Includes are
// disabled so the input cannot read other files. A config that loads is
// also run through the lookups a request would make.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.h"
#include "config/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = torii::config::load_from_string(text, "/fuzz/");
  if (!r.ok()) return 0;
  const auto& cfg = **r;
  torii::config::Captures caps;
  for (const auto& g : cfg.listen_groups) {
    const auto& srv = torii::config::find_server(g, "www.example.com");
    torii::config::find_location(srv, "/index.html", &caps);
    torii::config::find_location(srv, "/", &caps);
    torii::config::find_named_location(srv, "@fallback");
    torii::config::mime_type(srv.settings, "/a/b.HTML");
  }
  return 0;
}
