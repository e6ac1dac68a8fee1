#include "stream/client_hello.h"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/ssl.h>

#include <string>
#include <vector>

namespace torii::stream {
namespace {

std::string be16(size_t v) { return {char(v >> 8), char(v & 0xff)}; }

std::string extension(int type, const std::string& body) { return be16(size_t(type)) + be16(body.size()) + body; }

struct Hello {
  std::string sni;
  std::vector<std::string> alpn;
  bool supported_versions = false;
  bool extensions = true;
};

// A ClientHello message (no record header), built field by field.
std::string message(const Hello& h) {
  std::string body = "\x03\x03" + std::string(32, 'r');  // legacy version TLS 1.2, random
  body += std::string("\x00", 1);                        // no session id
  body += be16(2) + std::string("\x13\x01", 2);          // one cipher suite
  body += std::string("\x01\x00", 2);                    // null compression
  if (h.extensions) {
    std::string exts;
    exts += extension(0xff01, std::string("\x00", 1));  // renegotiation_info: skipped
    if (!h.sni.empty()) {
      std::string entry = std::string("\x00", 1) + be16(h.sni.size()) + h.sni;
      exts += extension(0, be16(entry.size()) + entry);
    }
    if (!h.alpn.empty()) {
      std::string list;
      for (const auto& p : h.alpn) list += char(p.size()) + p;
      exts += extension(16, be16(list.size()) + list);
    }
    if (h.supported_versions) exts += extension(43, std::string("\x04\x03\x04\x03\x03", 5));
    body += be16(exts.size()) + exts;
  }
  return std::string("\x01", 1) + char(body.size() >> 16) + be16(body.size() & 0xffff) + body;
}

std::string record(const std::string& payload) { return std::string("\x16\x03\x01", 3) + be16(payload.size()) + payload; }

TEST(ClientHello, ReadsNameAlpnAndVersion) {
  const std::string in = record(message({"a.example.com", {"h2", "http/1.1"}, true}));
  ClientHelloInfo info;
  ASSERT_EQ(parse_client_hello(in, info), HelloResult::done);
  EXPECT_EQ(info.server_name, "a.example.com");
  EXPECT_EQ(info.alpn, "h2,http/1.1");
  EXPECT_EQ(info.protocol, "TLSv1.3");
}

TEST(ClientHello, LegacyVersionWithoutSupportedVersions) {
  ClientHelloInfo info;
  ASSERT_EQ(parse_client_hello(record(message({"b.example.com", {}, false})), info), HelloResult::done);
  EXPECT_EQ(info.protocol, "TLSv1.2");
  EXPECT_EQ(info.alpn, "");
  ASSERT_EQ(parse_client_hello(record(message({"", {}, false, false})), info), HelloResult::done);
  EXPECT_EQ(info.server_name, "");
  EXPECT_EQ(info.protocol, "TLSv1.2");
}

TEST(ClientHello, EveryPrefixAsksForMore) {
  const std::string in = record(message({"a.example.com", {"h2"}, true}));
  for (size_t n = 0; n < in.size(); ++n) {
    ClientHelloInfo info;
    EXPECT_EQ(parse_client_hello(in.substr(0, n), info), HelloResult::need_more) << n;
  }
}

TEST(ClientHello, MessageSplitOverRecords) {
  const std::string msg = message({"split.example.com", {"imap"}, true});
  std::string in;
  for (size_t at = 0; at < msg.size(); at += 7) in += record(msg.substr(at, 7));
  ClientHelloInfo info;
  ASSERT_EQ(parse_client_hello(in, info), HelloResult::done);
  EXPECT_EQ(info.server_name, "split.example.com");
  EXPECT_EQ(info.alpn, "imap");
}

TEST(ClientHello, NotTlsIsDeclinedOnceFiveBytesCame) {
  ClientHelloInfo info;
  EXPECT_EQ(parse_client_hello("GET", info), HelloResult::need_more);
  EXPECT_EQ(parse_client_hello("GET / HTTP/1.1\r\n", info), HelloResult::not_hello);
  EXPECT_EQ(parse_client_hello(std::string("\x16\x02\x00\x00\x01", 5), info), HelloResult::not_hello);
  // A handshake record that is not a ClientHello (a ServerHello).
  std::string server_hello = message({"x", {}, false});
  server_hello[0] = 2;
  EXPECT_EQ(parse_client_hello(record(server_hello), info), HelloResult::not_hello);
}

TEST(ClientHello, LengthsThatLieAreRefused) {
  ClientHelloInfo info;
  // The server name claims more than its list holds.
  std::string msg = message({"a.example.com", {}, false});
  const size_t at = msg.find("a.example.com");
  msg[at - 1] = char(msg[at - 1] + 5);
  EXPECT_EQ(parse_client_hello(record(msg), info), HelloResult::not_hello);
  // An empty ALPN protocol.
  std::string empty = message({"", {""}, false});
  EXPECT_EQ(parse_client_hello(record(empty), info), HelloResult::not_hello);
  // A message length shorter than its fields.
  std::string shorter = message({"a.example.com", {"h2"}, false});
  shorter[3] = char(shorter[3] - 10);
  EXPECT_EQ(parse_client_hello(record(shorter), info), HelloResult::not_hello);
}

TEST(ClientHello, SslV2Format) {
  ClientHelloInfo info;
  ASSERT_EQ(parse_client_hello(std::string("\x80\x2e\x01\x00\x02", 5), info), HelloResult::done);
  EXPECT_EQ(info.protocol, "SSLv2");
  ASSERT_EQ(parse_client_hello(std::string("\x80\x2e\x01\x03\x01", 5), info), HelloResult::done);
  EXPECT_EQ(info.protocol, "TLSv1");
}

// What OpenSSL itself sends as a client.
TEST(ClientHello, OpenSslClientHello) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL* ssl = SSL_new(ctx);
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  SSL_set_bio(ssl, in, out);
  SSL_set_tlsext_host_name(ssl, "Mixed.Example.org");
  const unsigned char alpn[] = "\x02h2\x08http/1.1";
  SSL_set_alpn_protos(ssl, alpn, sizeof alpn - 1);
  SSL_set_connect_state(ssl);
  EXPECT_NE(SSL_do_handshake(ssl), 1);  // waits for the server
  char* data = nullptr;
  const long len = BIO_get_mem_data(out, &data);
  const std::string hello(data, size_t(len));
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  ClientHelloInfo info;
  ASSERT_EQ(parse_client_hello(hello, info), HelloResult::done);
  EXPECT_EQ(info.server_name, "Mixed.Example.org");  // as sent, as nginx's variable
  EXPECT_EQ(info.alpn, "h2,http/1.1");
  EXPECT_EQ(info.protocol, "TLSv1.3");
  // Byte by byte: more until the last byte, then the same answer.
  for (size_t n = 0; n < hello.size(); ++n) EXPECT_EQ(parse_client_hello(hello.substr(0, n), info), HelloResult::need_more);
}

}  // namespace
}  // namespace torii::stream
