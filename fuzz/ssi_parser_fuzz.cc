// The SSI parser: a body from the input, fed whole and again in pieces of
// sizes the input chooses. What comes out (text, commands, errors) must not
// depend on where the pieces were cut, and names and values stay within
// their limits.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "modules/ssi/parser.h"

using torii::ssi::Parser;

namespace {

void describe(Parser& p, Parser::Event ev, std::string& out, size_t value_length) {
  if (ev == Parser::Event::error) {
    out += "\x01" + p.error() + "\x02";
    return;
  }
  const auto& c = p.command();
  if (c.name.empty() || c.name.size() > torii::ssi::kMaxCommandLength) abort();
  if (c.params.size() > torii::ssi::kMaxParams + 1) abort();
  out += "\x03" + c.name;
  for (const auto& prm : c.params) {
    if (prm.name.size() > torii::ssi::kMaxParamLength || prm.value.size() > value_length) abort();
    out += "\x04" + prm.name + "\x05" + prm.value;
  }
  out += c.too_many_params ? "\x06" : "\x02";
}

std::string run(std::string_view body, std::string_view cuts, size_t value_length) {
  Parser p(value_length);
  std::string out;
  auto feed = [&](std::string_view in) {
    for (;;) {
      const auto ev = p.feed(in, out);
      if (ev == Parser::Event::more) break;
      describe(p, ev, out, value_length);
    }
    if (!in.empty()) abort();
  };
  size_t at = 0;
  for (char c : cuts) {
    if (at >= body.size()) break;
    const size_t n = 1 + uint8_t(c) % 24;
    feed(body.substr(at, n));
    at += std::min(n, body.size() - at);
  }
  feed(body.substr(at));
  if (p.finish(out)) out += "\x07";
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t value_length = 1 + data[0] % 64;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string_view cuts = rest.substr(0, rest.size() / 5);
  const std::string_view body = rest.substr(cuts.size());
  const std::string whole = run(body, {}, value_length);
  if (run(body, cuts, value_length) != whole) abort();
  return 0;
}
