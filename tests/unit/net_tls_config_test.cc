// The ssl_* directives: values, inheritance, and the contexts built at load.
#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include "config/ssl_config.h"
#include "net_tls_test_util.h"

namespace torii::config {
namespace {

using testing::TlsDir;

class TlsConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.make_cert("a", "a.test");
    dir_.make_cert("b", "b.test");
  }
  const Server& server(const Config& c, size_t i) { return *c.servers[i]; }
  TlsDir dir_;
};

TEST_F(TlsConfigTest, Defaults) {
  auto cfg = dir_.load("server { listen 127.0.0.1:1 ssl; ssl_certificate a.crt; ssl_certificate_key a.key; }");
  ASSERT_TRUE(cfg) << cfg.error();
  const auto& ssl = *server(**cfg, 0).ssl;
  EXPECT_EQ(ssl.protocols, kTlsV12 | kTlsV13);
  EXPECT_EQ(ssl.ciphers, "HIGH:!aNULL:!MD5");
  EXPECT_EQ(ssl.session_cache, SslServerConfig::SessionCache::none);
  EXPECT_EQ(ssl.session_timeout_s, 300);
  EXPECT_TRUE(ssl.session_tickets);
  EXPECT_FALSE(ssl.early_data);
  EXPECT_EQ(ssl.buffer_size, 16384u);
  EXPECT_TRUE(ssl.ctx);
  EXPECT_TRUE((*cfg)->listen_groups[0].listen.ssl);
  // Relative files are relative to the config file's folder.
  EXPECT_EQ(ssl.certificates[0].path, dir_.path() + "a.crt");
}

TEST_F(TlsConfigTest, Values) {
  auto cfg = dir_.load(R"(server {
    listen 127.0.0.1:1 ssl;
    ssl_certificate a.crt; ssl_certificate_key a.key;
    ssl_protocols TLSv1.2;
    ssl_ciphers ECDHE:!aNULL;
    ssl_prefer_server_ciphers on;
    ssl_ecdh_curve X25519:prime256v1;
    ssl_session_cache builtin:1000 shared:SSL:10m;
    ssl_session_timeout 1h;
    ssl_session_tickets off;
    ssl_early_data on;
    ssl_buffer_size 4k;
    ssl_conf_command Options PrioritizeChaCha;
  })");
  ASSERT_TRUE(cfg) << cfg.error();
  const auto& ssl = *server(**cfg, 0).ssl;
  EXPECT_EQ(ssl.protocols, kTlsV12);
  EXPECT_TRUE(ssl.prefer_server_ciphers);
  EXPECT_EQ(ssl.ecdh_curve, "X25519:prime256v1");
  EXPECT_EQ(ssl.session_cache, SslServerConfig::SessionCache::shared);
  EXPECT_EQ(ssl.session_cache_name, "SSL");
  EXPECT_EQ(ssl.session_cache_size, 10 * 1024 * 1024 / 256);
  EXPECT_EQ(ssl.session_timeout_s, 3600);
  EXPECT_FALSE(ssl.session_tickets);
  EXPECT_TRUE(ssl.early_data);
  EXPECT_EQ(ssl.buffer_size, 4096u);
  ASSERT_EQ(ssl.conf_commands.size(), 1u);
  EXPECT_EQ(SSL_CTX_get_max_early_data(ssl.ctx.get()), 16384u);
  EXPECT_EQ(SSL_CTX_get_min_proto_version(ssl.ctx.get()), TLS1_2_VERSION);
  EXPECT_EQ(SSL_CTX_get_max_proto_version(ssl.ctx.get()), TLS1_2_VERSION);
}

TEST_F(TlsConfigTest, HttpLevelSettingsAreInheritedAndShareOneContext) {
  auto cfg = dir_.load(R"(
    ssl_certificate a.crt; ssl_certificate_key a.key;
    ssl_session_cache shared:SSL:1m;
    server { listen 127.0.0.1:1 ssl; server_name one; }
    server { listen 127.0.0.1:1 ssl; server_name two; }
    server { listen 127.0.0.1:1 ssl; server_name three;
             ssl_certificate b.crt; ssl_certificate_key b.key; }
  )");
  ASSERT_TRUE(cfg) << cfg.error();
  const auto& c = **cfg;
  EXPECT_EQ(server(c, 0).ssl->ctx, server(c, 1).ssl->ctx);
  ASSERT_EQ(server(c, 2).ssl->certificates.size(), 1u);  // replaced, not added to
  EXPECT_EQ(server(c, 2).ssl->certificates[0].path, dir_.path() + "b.crt");
  EXPECT_NE(server(c, 2).ssl->ctx, server(c, 0).ssl->ctx);
  EXPECT_EQ(server(c, 2).ssl->session_cache, SslServerConfig::SessionCache::shared);  // the rest inherited
}

TEST_F(TlsConfigTest, SeveralPairsPerServer) {
  dir_.make_cert("a2", "a.test");
  auto cfg = dir_.load(R"(server { listen 127.0.0.1:1 ssl;
    ssl_certificate a.crt; ssl_certificate_key a.key;
    ssl_certificate a2.crt; ssl_certificate_key a2.key; })");
  ASSERT_TRUE(cfg) << cfg.error();
  EXPECT_EQ(server(**cfg, 0).ssl->certificates.size(), 2u);
}

TEST_F(TlsConfigTest, Errors) {
  struct Case {
    std::string text;
    std::string want;
  } cases[] = {
      {"server { listen 127.0.0.1:1 ssl; }", "no \"ssl_certificate\" is defined for the \"listen ... ssl\" directive"},
      {"server { ssl_certificate nope.crt; ssl_certificate_key a.key; }",
       "cannot load certificate \"" + dir_.path() + "nope.crt\""},
      {"server { ssl_certificate a.crt; ssl_certificate_key b.key; }",
       "cannot load certificate key \"" + dir_.path() + "b.key\""},
      {"server { ssl_certificate a.crt; }", "no \"ssl_certificate_key\" is defined for certificate"},
      {"server { ssl_protocols TLSv9; }", "invalid value \"TLSv9\" in \"ssl_protocols\" directive"},
      {"server { ssl_session_cache shared:SSL; }", "invalid value \"shared:SSL\""},
      {"server { ssl_session_cache off none; }", "invalid value \"off\""},
      {"server { ssl_session_cache shared:SSL:1k; }", "is too small"},
      {"server { ssl_certificate a.crt; ssl_certificate_key a.key; ssl_ciphers NOPE; }",
       "SSL_CTX_set_cipher_list(\"NOPE\") failed"},
      {"server { ssl_certificate a.crt; ssl_certificate_key a.key; ssl_session_ticket_key a.crt; }",
       "must be 80 or 48 bytes"},
      {"server { ssl_certificate a.crt; ssl_certificate_key a.key; ssl_conf_command NoSuch x; }",
       "SSL_CONF_cmd(\"NoSuch\", \"x\") failed"},
      {"server { ssl_certificate $host.crt; }", "only $ssl_server_name is supported as a variable in \"ssl_certificate\""},
      {"server { ssl_ocsp on; }", "\"ssl_ocsp on\" is not yet supported"},
  };
  for (const auto& c : cases) {
    auto cfg = dir_.load(c.text);
    ASSERT_FALSE(cfg) << c.text;
    EXPECT_NE(cfg.error().find(c.want), std::string::npos) << c.text << "\n -> " << cfg.error();
    EXPECT_NE(cfg.error().find("torii.conf:"), std::string::npos) << cfg.error();
  }
}

TEST_F(TlsConfigTest, OldProtocolsWarn) {
  auto cfg = dir_.load("server { listen 127.0.0.1:1 ssl; ssl_certificate a.crt; ssl_certificate_key a.key;"
                       " ssl_protocols TLSv1 TLSv1.1 TLSv1.2; }");
  ASSERT_TRUE(cfg) << cfg.error();
  bool warned = false;
  for (const auto& w : load_warnings()) warned |= w.find("TLSv1.1 in \"ssl_protocols\"") != std::string::npos;
  EXPECT_TRUE(warned);
  // Not where the ciphers lower the security level to 0.
  cfg = dir_.load("server { listen 127.0.0.1:1 ssl; ssl_certificate a.crt; ssl_certificate_key a.key;"
                  " ssl_protocols TLSv1 TLSv1.1 TLSv1.2; ssl_ciphers DEFAULT:@SECLEVEL=0; }");
  ASSERT_TRUE(cfg) << cfg.error();
  for (const auto& w : load_warnings()) EXPECT_EQ(w.find("ssl_protocols"), std::string::npos) << w;
}

TEST_F(TlsConfigTest, DeprecatedSslOnMakesListensTls) {
  auto cfg = dir_.load("server { listen 127.0.0.1:1; ssl on; ssl_certificate a.crt; ssl_certificate_key a.key; }");
  ASSERT_TRUE(cfg) << cfg.error();
  EXPECT_TRUE((*cfg)->listen_groups[0].listen.ssl);
}

TEST_F(TlsConfigTest, TicketKeyFiles) {
  dir_.write("k80", std::string(80, 'k'));
  dir_.write("k48", std::string(48, 'j'));
  auto cfg = dir_.load("server { ssl_certificate a.crt; ssl_certificate_key a.key;"
                       " ssl_session_ticket_key k80; ssl_session_ticket_key k48; }");
  ASSERT_TRUE(cfg) << cfg.error();
  EXPECT_EQ(server(**cfg, 0).ssl->ticket_key_files.size(), 2u);
}

}  // namespace
}  // namespace torii::config
