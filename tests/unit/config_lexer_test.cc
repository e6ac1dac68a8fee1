#include <gtest/gtest.h>

#include <vector>

#include "config/lexer.h"
#include "config/parser.h"

namespace torii::config {
namespace {

std::vector<Token> lex_all(std::string_view text) {
  Lexer lx("t.conf", text);
  std::vector<Token> out;
  for (;;) {
    auto t = lx.next();
    EXPECT_TRUE(t.ok()) << t.error();
    if (!t.ok() || t->kind == Token::Kind::eof) break;
    out.push_back(*t);
  }
  return out;
}

std::string parse_error(std::string_view text) {
  Parser p("/nonexistent/", nullptr, false);
  auto r = p.parse_text("t.conf", text);
  return r.ok() ? "" : r.error();
}

TEST(ConfigLexer, WordsPunctuationAndLines) {
  auto t = lex_all("worker_processes 2;\nhttp {\n  server {}\n}\n");
  ASSERT_EQ(t.size(), 9u);
  EXPECT_EQ(t[0].text, "worker_processes");
  EXPECT_EQ(t[1].text, "2");
  EXPECT_EQ(t[2].kind, Token::Kind::semicolon);
  EXPECT_EQ(t[3].text, "http");
  EXPECT_EQ(t[3].line, 2);
  EXPECT_EQ(t[4].kind, Token::Kind::open_brace);
  EXPECT_EQ(t[5].text, "server");
  EXPECT_EQ(t[5].line, 3);
  EXPECT_EQ(t[7].kind, Token::Kind::close_brace);
  EXPECT_EQ(t[8].line, 4);
}

TEST(ConfigLexer, QuotedStringsAndEscapes) {
  auto t = lex_all(R"(a "x y;{}" 'it\'s' "q\"q" "t\tn\nr\r" "back\\slash" "keep\.dot" plain\"x;)");
  ASSERT_EQ(t.size(), 9u);
  EXPECT_EQ(t[1].text, "x y;{}");
  EXPECT_TRUE(t[1].quoted);
  EXPECT_EQ(t[2].text, "it's");
  EXPECT_EQ(t[3].text, "q\"q");
  EXPECT_EQ(t[4].text, "t\tn\nr\r");
  EXPECT_EQ(t[5].text, "back\\slash");
  EXPECT_EQ(t[6].text, "keep\\.dot");  // unknown escapes stay for regexes
  EXPECT_EQ(t[7].text, "plain\"x");
  EXPECT_FALSE(t[7].quoted);
}

TEST(ConfigLexer, EmptyQuotedStringIsAnArgument) {
  auto t = lex_all(R"(server_name "" '';)");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[1].text, "");
  EXPECT_EQ(t[2].text, "");
}

TEST(ConfigLexer, CommentsOnlyAtTokenStart) {
  auto t = lex_all("a # comment ; {\nb c#d;\n");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].text, "a");
  EXPECT_EQ(t[1].text, "b");
  EXPECT_EQ(t[1].line, 2);
  EXPECT_EQ(t[2].text, "c#d");
}

TEST(ConfigLexer, VariablesStayLiteral) {
  auto t = lex_all("add_header X $host${uri}x \"$a ${b}\";");
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[2].text, "$host${uri}x");
  EXPECT_EQ(t[3].text, "$a ${b}");
}

TEST(ConfigLexer, QuoteMustBeFollowedBySeparator) {
  Lexer lx("t.conf", "a \"b\"c;");
  ASSERT_TRUE(lx.next().ok());
  auto r = lx.next();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "t.conf:1: unexpected \"c\"");
}

TEST(ConfigParser, BuildsTreeWithLines) {
  Parser p("/nonexistent/", nullptr, false);
  auto r = p.parse_text("t.conf", "events {}\nhttp {\n  server {\n    listen 80;\n  }\n}\n");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 2u);
  const Node& http = (*r)[1];
  EXPECT_EQ(http.name, "http");
  EXPECT_TRUE(http.block);
  EXPECT_EQ(http.line, 2);
  ASSERT_EQ(http.children.size(), 1u);
  const Node& listen = http.children[0].children[0];
  EXPECT_EQ(listen.name, "listen");
  EXPECT_EQ(listen.line, 4);
  EXPECT_EQ(*listen.file, "t.conf");
  ASSERT_EQ(listen.args.size(), 1u);
  EXPECT_EQ(listen.args[0], "80");
}

TEST(ConfigParser, SyntaxErrorsCarryLineNumbers) {
  EXPECT_EQ(parse_error("http {\n  server {\n"),
            "t.conf:3: unexpected end of file, expecting \";\" or \"}\"");
  EXPECT_EQ(parse_error("worker_processes 1"),
            "t.conf:1: unexpected end of file, expecting \";\" or \"}\"");
  EXPECT_EQ(parse_error("a 1;\nb \"unterminated;\n"),
            "t.conf:3: unexpected end of file, expecting \";\" or \"}\"");
  EXPECT_EQ(parse_error("a;\n}\n"), "t.conf:2: unexpected \"}\"");
  EXPECT_EQ(parse_error("http {\n a b }\n"), "t.conf:2: unexpected \"}\"");
  EXPECT_EQ(parse_error("\n\n;"), "t.conf:3: unexpected \";\"");
  EXPECT_EQ(parse_error("{ }"), "t.conf:1: unexpected \"{\"");
  EXPECT_EQ(parse_error(""), "");
  EXPECT_EQ(parse_error("# only a comment"), "");
}

TEST(ConfigParser, IncludeDisabledForUntrustedText) {
  EXPECT_EQ(parse_error("include x.conf;"), "t.conf:1: \"include\" is not allowed here");
}

}  // namespace
}  // namespace torii::config
