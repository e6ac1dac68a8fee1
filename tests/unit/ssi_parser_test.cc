#include "modules/ssi/parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace torii::ssi {
namespace {

// Feeds `pieces` and describes what came out: text as is, a command as
// [name k=v ...], an error as [!error].
std::string run(const std::vector<std::string>& pieces, Parser& p) {
  std::string out;
  for (const auto& piece : pieces) {
    std::string_view in = piece;
    for (;;) {
      std::string text;
      const auto ev = p.feed(in, text);
      out += text;
      if (ev == Parser::Event::more) break;
      if (ev == Parser::Event::error) {
        out += "[!" + p.error() + "]";
        continue;
      }
      out += "[" + p.command().name;
      for (const auto& prm : p.command().params) out += " " + prm.name + "=" + prm.value;
      out += "]";
    }
  }
  std::string tail;
  if (p.finish(tail)) tail += "[open]";
  return out + tail;
}

std::string run(const std::vector<std::string>& pieces) {
  Parser p;
  return run(pieces, p);
}

TEST(SsiParser, TextAndCommands) {
  EXPECT_EQ(run({"a<!--#echo var=\"x\" -->b"}), "a[echo var=x]b");
  EXPECT_EQ(run({"<!--# include virtual='/a' wait=\"yes\"-->"}), "[include virtual=/a wait=yes]");
  EXPECT_EQ(run({"<!--#endif-->"}), "[endif]");
  EXPECT_EQ(run({"<!--#set var = \"v\"\n value=\"1\"  -->"}), "[set var=v value=1]");
}

TEST(SsiParser, PlainCommentsAndLookalikesAreText) {
  EXPECT_EQ(run({"<!-- comment --> <b> <<!--#x--> <!-x <!- <"}), "<!-- comment --> <b> <[x] <!-x <!- <");
  EXPECT_EQ(run({"<!<!--#x-->"}), "<![x]");
}

TEST(SsiParser, BackslashesStayForTheEvaluator) {
  EXPECT_EQ(run({R"(<!--#set var="a" value="q\"u\\o" -->)"}), R"([set var=a value=q\"u\\o])");
}

TEST(SsiParser, EveryCutGivesTheSameResult) {
  const std::string body = "x<!--#include virtual=\"/a b\" stub='one' -->y<!-- z --><!--#endif-->w<!";
  const std::string whole = run({body});
  EXPECT_EQ(whole, "x[include virtual=/a b stub=one]y<!-- z -->[endif]w<!");
  for (size_t cut = 0; cut <= body.size(); ++cut)
    for (size_t cut2 = cut; cut2 <= body.size(); cut2 += 3)
      EXPECT_EQ(run({body.substr(0, cut), body.substr(cut, cut2 - cut), body.substr(cut2)}), whole) << cut << " " << cut2;
}

TEST(SsiParser, BrokenCommandsEndAtTheirClose) {
  EXPECT_EQ(run({"a<!--#echo var=x -->b"}),
            "a[!unexpected \"x\" symbol before value of \"var\" parameter in \"echo\" SSI command]b");
  EXPECT_EQ(run({"<!--#echo var-x -->."}),
            "[!unexpected \"-\" symbol after \"var\" parameter in \"echo\" SSI command].");
  EXPECT_EQ(run({"<!--#echo var=\"a\"x -->."}),
            "[!unexpected \"x\" symbol after \"a\" value of \"var\" parameter in \"echo\" SSI command].");
  EXPECT_EQ(run({"<!--#echo -x>-->!"}), "[!unexpected \"x\" symbol in \"echo\" SSI command]!");
}

TEST(SsiParser, Limits) {
  const std::string long_name(33, 'c');
  EXPECT_EQ(run({"<!--#" + long_name + " -->"}),
            "[!the \"" + long_name + "...\" SSI command is too long]");
  Parser p(4);
  EXPECT_EQ(run({"<!--#set value=\"12345\" -->."}, p),
            "[!too long \"12345...\" value of \"value\" parameter in \"set\" SSI command].");
  std::string many = "<!--#echo";
  for (int i = 0; i < 40; ++i) many += " p=\"v\"";
  many += " -->";
  Parser q;
  std::string_view in = many;
  std::string text;
  ASSERT_EQ(q.feed(in, text), Parser::Event::command);
  EXPECT_TRUE(q.command().too_many_params);
  EXPECT_EQ(q.command().params.size(), kMaxParams + 1);
}

TEST(SsiParser, UnfinishedCommandAtTheEnd) {
  EXPECT_EQ(run({"a<!--#echo var=\"x\""}), "a[open]");
  EXPECT_EQ(run({"a<!--"}), "a<!--");
}

}  // namespace
}  // namespace torii::ssi
