// The http3/quic directives: nginx's defaults, which addresses answer QUIC,
// and the Alt-Svc each server advertises over TCP.
#include <gtest/gtest.h>

#include "config/config.h"
#include "config/ssl_config.h"
#include "net_tls_test_util.h"

namespace torii::config {
namespace {

using testing::TlsDir;

const ListenGroup* group(const Config& cfg, const std::string& text, bool quic) {
  for (const auto& g : cfg.listen_groups)
    if (g.listen.text == text && g.listen.quic == quic) return &g;
  return nullptr;
}

class Http3Config : public ::testing::Test {
 protected:
  void SetUp() override { dir.make_cert("a", "a.test"); }
  std::string certs() const {
    return "ssl_certificate " + dir.path() + "a.crt; ssl_certificate_key " + dir.path() + "a.key;\n";
  }
  TlsDir dir;
};

TEST_F(Http3Config, DefaultsAreNginxs) {
  auto cfg = dir.load(certs() + "server { listen 127.0.0.1:443 ssl; }");
  ASSERT_TRUE(cfg.ok()) << cfg.error();
  const Server& s = *(*cfg)->servers[0];
  const auto& h3 = s.http3_settings;
  EXPECT_TRUE(h3.enabled);
  EXPECT_FALSE(h3.explicit_on);
  EXPECT_EQ(h3.max_concurrent_streams, 128u);
  EXPECT_EQ(h3.stream_buffer_size, 64u * 1024);
  EXPECT_FALSE(h3.retry);
  EXPECT_FALSE(h3.gso);
  EXPECT_EQ(h3.active_connection_id_limit, 2u);
  EXPECT_TRUE(h3.host_key.empty());
  // Without `http3 on` a TLS address stays TCP only, and nothing is advertised.
  EXPECT_FALSE(group(**cfg, "127.0.0.1:443", false)->udp);
  EXPECT_TRUE(s.alt_svc.empty());
  EXPECT_FALSE(s.ssl->quic_credentials);
}

TEST_F(Http3Config, Http3OnBesideSslAnswersOnTheSamePort) {
  auto cfg = dir.load(certs() + "server { listen 127.0.0.1:443 ssl; http3 on; http3_max_concurrent_streams 10; "
                                "http3_stream_buffer_size 1m; quic_retry on; quic_gso on; "
                                "quic_active_connection_id_limit 4; }");
  ASSERT_TRUE(cfg.ok()) << cfg.error();
  const Server& s = *(*cfg)->servers[0];
  EXPECT_TRUE(group(**cfg, "127.0.0.1:443", false)->udp);
  EXPECT_EQ(s.alt_svc, "h3=\":443\"; ma=86400");
  EXPECT_TRUE(s.ssl->quic_credentials);
  EXPECT_EQ(s.http3_settings.max_concurrent_streams, 10u);
  EXPECT_EQ(s.http3_settings.stream_buffer_size, 1024u * 1024);
  EXPECT_TRUE(s.http3_settings.retry);
  EXPECT_TRUE(s.http3_settings.gso);
  EXPECT_EQ(s.http3_settings.active_connection_id_limit, 4u);
}

TEST_F(Http3Config, QuicListenIsItsOwnUdpGroup) {
  auto cfg = dir.load(certs() + "server { listen 127.0.0.1:443 ssl; listen 127.0.0.1:8443 quic reuseport; }");
  ASSERT_TRUE(cfg.ok()) << cfg.error();
  EXPECT_FALSE(group(**cfg, "127.0.0.1:443", false)->udp);
  const ListenGroup* q = group(**cfg, "127.0.0.1:8443", true);
  ASSERT_TRUE(q);
  EXPECT_TRUE(q->udp);
  EXPECT_EQ((*cfg)->servers[0]->alt_svc, "h3=\":8443\"; ma=86400");
}

TEST_F(Http3Config, OneUdpSocketPerAddress) {
  // nginx's usual pair on one port: the quic listen owns UDP; `http3 on`
  // must not open a second socket that would split its datagrams.
  auto cfg = dir.load(certs() + "server { listen 127.0.0.1:443 ssl; listen 127.0.0.1:443 quic; http3 on; }");
  ASSERT_TRUE(cfg.ok()) << cfg.error();
  EXPECT_FALSE(group(**cfg, "127.0.0.1:443", false)->udp);
  EXPECT_TRUE(group(**cfg, "127.0.0.1:443", true)->udp);
}

TEST_F(Http3Config, AltSvcOffAndHttp3Off) {
  auto cfg = dir.load(certs() + "server { listen 127.0.0.1:443 ssl; http3 on; http3_alt_svc off; }\n"
                                "server { listen 127.0.0.1:444 ssl; listen 127.0.0.1:8444 quic; http3 off; }");
  ASSERT_TRUE(cfg.ok()) << cfg.error();
  EXPECT_TRUE((*cfg)->servers[0]->alt_svc.empty());
  EXPECT_TRUE((*cfg)->servers[1]->alt_svc.empty());
}

TEST_F(Http3Config, HostKeyIsTheFilesBytes) {
  const std::string key = dir.write("quic.key", std::string("0123456789abcdef0123456789abcdef"));
  auto cfg = dir.load(certs() + "quic_host_key " + key + "; server { listen 127.0.0.1:443 quic; }");
  ASSERT_TRUE(cfg.ok()) << cfg.error();
  EXPECT_EQ((*cfg)->servers[0]->http3_settings.host_key, "0123456789abcdef0123456789abcdef");
  auto missing = dir.load(certs() + "quic_host_key " + dir.path() + "nope; server { listen 127.0.0.1:443 quic; }");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("open() \"" + dir.path() + "nope\" failed"), std::string::npos) << missing.error();
}

}  // namespace
}  // namespace torii::config
