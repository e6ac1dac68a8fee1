// libFuzzer target for the FastCGI record decoder and the CGI head parser
// behind it (what php-fpm and any FastCGI application send back).
//
// The records are decoded whole and again in two pieces (split point from
// the input's first byte): the verdicts, the STDOUT bytes and the STDERR
// bytes must agree, because what the gateway makes of an application's
// bytes must not depend on how the socket cut them. STDOUT then goes
// through the CGI head parser, which must not read past what it was given.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "upstream/cgi_head.h"
#include "upstream/fastcgi/record.h"

namespace fcgi = torii::upstream::fastcgi;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

struct Collect final : fcgi::DecoderEvents {
  std::string out;
  std::string err;
  size_t stderr_records = 0;
  void on_stdout(std::string_view d) override { out.append(d); }
  void on_stderr(std::string_view d, bool end) override {
    err.append(d);
    stderr_records += end;
  }
};

fcgi::Decoder::Status run(std::string_view in, size_t split, Collect& c, size_t& used) {
  fcgi::Decoder dec;
  used = 0;
  size_t consumed = 0;
  auto st = dec.feed(in.substr(0, split), consumed, c);
  used += consumed;
  check(consumed <= split);
  if (st != fcgi::Decoder::Status::more) return st;
  st = dec.feed(in.substr(split), consumed, c);
  used += consumed;
  return st;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t split = std::min<size_t>(data[0] * 4, in.size());

  Collect whole;
  size_t used_whole = 0;
  const auto a = run(in, in.size(), whole, used_whole);
  Collect pieces;
  size_t used_pieces = 0;
  const auto b = run(in, split, pieces, used_pieces);
  check(a == b);
  check(whole.out == pieces.out && whole.err == pieces.err);
  if (a == fcgi::Decoder::Status::done) check(used_whole == used_pieces && used_whole <= in.size());

  for (bool status_line : {false, true}) {
    torii::upstream::CgiHeadParser head(4096, status_line);
    head.append(whole.out);
    torii::http1::ParsedResponse r;
    if (head.parse(r) == torii::http1::ParseStatus::done) {
      check(r.status >= 100 && r.status <= 999);
      check(head.rest().size() <= whole.out.size());
    }
  }
  return 0;
}
