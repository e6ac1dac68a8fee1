#include <gtest/gtest.h>

#include "config/template.h"

namespace torii::config {
namespace {

TEST(ConfigTemplate, LiteralOnly) {
  auto t = compile_template("hello world");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->is_constant());
  ASSERT_EQ(t->parts.size(), 1u);
  EXPECT_EQ(t->parts[0].literal, "hello world");
  EXPECT_EQ(t->source, "hello world");

  auto e = compile_template("");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->empty());
  EXPECT_TRUE(e->is_constant());
}

TEST(ConfigTemplate, PlainAndBracedVariables) {
  auto t = compile_template("$scheme://${host}x$request_uri");
  ASSERT_TRUE(t.ok()) << t.error();
  ASSERT_EQ(t->parts.size(), 5u);
  EXPECT_TRUE(t->parts[0].is_variable);
  EXPECT_EQ(t->parts[0].variable.id, VarId::scheme);
  EXPECT_EQ(t->parts[1].literal, "://");
  EXPECT_EQ(t->parts[2].variable.id, VarId::host);
  EXPECT_EQ(t->parts[3].literal, "x");
  EXPECT_EQ(t->parts[4].variable.id, VarId::request_uri);
  EXPECT_FALSE(t->is_constant());
}

TEST(ConfigTemplate, EveryPlainName) {
  const std::pair<const char*, VarId> names[] = {
      {"args", VarId::args}, {"body_bytes_sent", VarId::body_bytes_sent}, {"bytes_sent", VarId::bytes_sent},
      {"connection", VarId::connection}, {"connection_requests", VarId::connection_requests},
      {"content_length", VarId::content_length}, {"content_type", VarId::content_type},
      {"document_root", VarId::document_root}, {"document_uri", VarId::document_uri}, {"host", VarId::host},
      {"hostname", VarId::hostname}, {"https", VarId::https}, {"is_args", VarId::is_args}, {"msec", VarId::msec},
      {"pid", VarId::pid}, {"query_string", VarId::query_string}, {"realpath_root", VarId::realpath_root},
      {"remote_addr", VarId::remote_addr}, {"remote_port", VarId::remote_port},
      {"remote_user", VarId::remote_user}, {"request", VarId::request},
      {"request_filename", VarId::request_filename}, {"request_length", VarId::request_length},
      {"request_method", VarId::request_method}, {"request_time", VarId::request_time},
      {"request_uri", VarId::request_uri}, {"scheme", VarId::scheme}, {"server_addr", VarId::server_addr},
      {"server_name", VarId::server_name}, {"server_port", VarId::server_port},
      {"server_protocol", VarId::server_protocol}, {"status", VarId::status},
      {"time_iso8601", VarId::time_iso8601}, {"time_local", VarId::time_local}, {"uri", VarId::uri},
  };
  for (const auto& [name, id] : names) {
    Variable v;
    ASSERT_TRUE(lookup_variable(name, v)) << name;
    EXPECT_EQ(v.id, id) << name;
    EXPECT_TRUE(v.arg.empty());
  }
}

TEST(ConfigTemplate, Families) {
  Variable v;
  ASSERT_TRUE(lookup_variable("http_User_Agent", v));
  EXPECT_EQ(v.id, VarId::http_);
  EXPECT_EQ(v.arg, "user-agent");
  ASSERT_TRUE(lookup_variable("sent_http_content_type", v));
  EXPECT_EQ(v.id, VarId::sent_http_);
  EXPECT_EQ(v.arg, "content-type");
  ASSERT_TRUE(lookup_variable("arg_Page_No", v));
  EXPECT_EQ(v.id, VarId::arg_);
  EXPECT_EQ(v.arg, "Page_No");
  ASSERT_TRUE(lookup_variable("cookie_session_id", v));
  EXPECT_EQ(v.id, VarId::cookie_);
  EXPECT_EQ(v.arg, "session_id");
  // A prefix with no name after it is the family's all the same (nginx
  // accepts $http_ and $arg_, which find nothing).
  ASSERT_TRUE(lookup_variable("http_", v));
  EXPECT_EQ(v.id, VarId::http_);
  EXPECT_EQ(v.arg, "");
  EXPECT_FALSE(lookup_variable("nope", v));
  EXPECT_FALSE(lookup_variable("", v));
}

TEST(ConfigTemplate, Captures) {
  auto t = compile_template("/img/$1abc/${2}$9");
  ASSERT_TRUE(t.ok()) << t.error();
  ASSERT_EQ(t->parts.size(), 5u);
  EXPECT_EQ(t->parts[0].literal, "/img/");
  EXPECT_EQ(t->parts[1].variable.id, VarId::capture);
  EXPECT_EQ(t->parts[1].variable.arg, "1");
  EXPECT_EQ(t->parts[2].literal, "abc/");
  EXPECT_EQ(t->parts[3].variable.arg, "2");
  EXPECT_EQ(t->parts[4].variable.id, VarId::capture);  // no empty literal between
  EXPECT_EQ(t->parts[4].variable.arg, "9");
}

TEST(ConfigTemplate, Errors) {
  auto u = compile_template("a $foo b");
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.error(), "unknown \"foo\" variable");
  EXPECT_FALSE(compile_template("end$").ok());
  EXPECT_FALSE(compile_template("${host").ok());
  EXPECT_FALSE(compile_template("$ x").ok());
  EXPECT_FALSE(compile_template("${a-b}").ok());
  EXPECT_EQ(compile_template("$0").error(), "unknown \"0\" variable");
}

}  // namespace
}  // namespace torii::config
