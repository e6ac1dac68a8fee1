#include "modules/browser/browser.h"

#include <gtest/gtest.h>

namespace torii::browser {
namespace {

TEST(Browser, VersionsPackAsNginxPacksThem) {
  uint64_t v = 0;
  ASSERT_TRUE(parse_version("1", v));
  EXPECT_EQ(v, 1000000u);
  ASSERT_TRUE(parse_version("1.9", v));
  EXPECT_EQ(v, 1090000u);
  ASSERT_TRUE(parse_version("4000.99.99.99", v));
  EXPECT_EQ(v, 4000999999u);
  ASSERT_TRUE(parse_version("1.2.3.4.5", v));  // past four parts the scale is 0
  EXPECT_EQ(v, 1020304u);
  ASSERT_TRUE(parse_version("", v));
  EXPECT_EQ(v, 0u);
  EXPECT_FALSE(parse_version("1.x", v));
  EXPECT_FALSE(parse_version("-1", v));
}

TEST(Browser, OperaIsCheckedFirstAndAddedWhenNotListed) {
  config::BrowserConfig c;
  add_modern(c, 2, 1000000);  // gecko 1
  add_modern(c, 1, 6000000);  // msie 6
  ASSERT_EQ(c.modern.size(), 3u);
  EXPECT_EQ(c.modern[0].slot, 0);
  EXPECT_EQ(c.modern[1].slot, 1);
  EXPECT_EQ(c.modern[2].slot, 2);
  add_modern(c, 0, 9000000);  // opera 9: the added line goes
  ASSERT_EQ(c.modern.size(), 3u);
  EXPECT_EQ(c.modern[0].version, 9000000u);
}

TEST(Browser, Judgement) {
  config::BrowserConfig c;
  EXPECT_FALSE(is_modern(c, nullptr));
  c.modern_unlisted = true;
  EXPECT_TRUE(is_modern(c, nullptr));
  std::string_view lynx = "Lynx/2.8";
  EXPECT_TRUE(is_modern(c, &lynx));
  c.ancient.push_back("Lynx");
  EXPECT_FALSE(is_modern(c, &lynx));
  add_modern(c, 2, 1090000);
  std::string_view ff = "Mozilla/5.0 (X11; rv:1.10) Gecko/20100101";
  EXPECT_TRUE(is_modern(c, &ff));
  std::string_view old = "Mozilla/5.0 (X11; rv:1.8.99) Gecko/20100101";
  EXPECT_FALSE(is_modern(c, &old));
  std::string_view cut = "Mozilla/5.0 (X11; rv:";  // the version would start at the end
  EXPECT_TRUE(is_modern(c, &cut));                  // so the line is skipped: unlisted
}

}  // namespace
}  // namespace torii::browser
