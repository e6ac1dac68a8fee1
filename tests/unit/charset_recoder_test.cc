// The charset filter's recoding, as a pure transform: whatever the cuts
// between pieces, the output is the whole body's.
#include <gtest/gtest.h>

#include <string>

#include "modules/charset/recoder.h"

namespace torii::charset {
namespace {

// A small koi8-r <-> UTF-8 map: 0xC1 'а' (U+0430), 0xE1 'А' (U+0410), 0x80 '€' (U+20AC).
config::CharsetMap koi_utf() {
  config::CharsetMap m;
  m.from = "koi8-r";
  m.to = "utf-8";
  m.to_utf8 = true;
  for (int b = 0; b < 256; ++b) m.forward_utf8[size_t(b)] = std::string(1, b < 0x80 ? char(b) : '?');
  m.forward_utf8[0xC1] = "\xD0\xB0";
  m.forward_utf8[0xE1] = "\xD0\x90";
  m.forward_utf8[0x80] = "\xE2\x82\xAC";
  m.backward_utf8[0x430] = 0xC1;
  m.backward_utf8[0x410] = 0xE1;
  m.backward_utf8[0x20AC] = 0x80;
  return m;
}

std::string run(const config::CharsetMap& m, Recoder::Direction d, const std::string& in, size_t cut) {
  Recoder r(m, d);
  std::string out;
  for (size_t i = 0; i < in.size(); i += cut) r.feed(std::string_view(in).substr(i, cut), out);
  r.finish(out);
  return out;
}

TEST(CharsetRecoder, OneByteToUtf8) {
  const auto m = koi_utf();
  EXPECT_EQ(run(m, Recoder::Direction::forward, "x\xC1\xE1\x80\xFFy", 100), "x\xD0\xB0\xD0\x90\xE2\x82\xAC?y");
}

TEST(CharsetRecoder, Utf8ToOneByteWhateverTheCuts) {
  const auto m = koi_utf();
  const std::string in = "a\xD0\xB0\xE2\x82\xAC\xE2\x98\x83\xF0\x9F\x98\x80z";  // а € ☃ 😀
  const std::string want = "a\xC1\x80&#9731;&#128512;z";
  for (size_t cut = 1; cut <= in.size(); ++cut) EXPECT_EQ(run(m, Recoder::Direction::backward, in, cut), want) << cut;
}

TEST(CharsetRecoder, InvalidUtf8IsAQuestionMark) {
  const auto m = koi_utf();
  EXPECT_EQ(run(m, Recoder::Direction::backward, "\x80x\xC0\xAFy", 100), "?x??y");  // overlong C0 AF too
  EXPECT_EQ(run(m, Recoder::Direction::backward, "x\xD0", 100), "x");  // cut short at the end: dropped
}

TEST(CharsetRecoder, OneByteTablesBothWays) {
  config::CharsetMap m;
  m.from = "koi8-r";
  m.to = "windows-1251";
  for (int b = 0; b < 256; ++b) m.forward[size_t(b)] = m.backward[size_t(b)] = uint8_t(b < 0x80 ? b : '?');
  m.forward[0xC1] = 0xE0;
  m.backward[0xE0] = 0xC1;
  EXPECT_EQ(run(m, Recoder::Direction::forward, "a\xC1\xC2", 1), "a\xE0?");
  EXPECT_EQ(run(m, Recoder::Direction::backward, "a\xE0", 1), "a\xC1");
}

}  // namespace
}  // namespace torii::charset
