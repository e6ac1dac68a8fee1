// TlsTransport against an OpenSSL client over a socket pair: handshake,
// SNI, ALPN, plain-HTTP detection, writes that must be retried, files
// through the record buffer and record sizes.
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "net/tls_transport.h"
#include "net_tls_test_util.h"

namespace torii::net {
namespace {

using testing::TlsDir;

struct Client {
  SSL_CTX* ctx = nullptr;
  SSL* ssl = nullptr;
  ~Client() {
    if (ssl) SSL_free(ssl);
    if (ctx) SSL_CTX_free(ctx);
  }
};

class TlsTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.make_cert("a", "a.test");
    dir_.make_cert("b", "b.test");
  }

  // Loads `servers` (server blocks) and connects a client over a socket pair.
  void start(const std::string& servers, const char* sni = nullptr, const char* alpn = nullptr) {
    auto cfg = dir_.load(servers);
    ASSERT_TRUE(cfg) << cfg.error();
    config_ = *cfg;
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    client_fd_ = sv[1];
    server_ = std::make_unique<TlsTransport>(sv[0], config_, config_->listen_groups[0]);
    client_.ctx = SSL_CTX_new(TLS_client_method());
    client_.ssl = SSL_new(client_.ctx);
    SSL_set_fd(client_.ssl, client_fd_);
    SSL_set_connect_state(client_.ssl);
    if (sni) SSL_set_tlsext_host_name(client_.ssl, sni);
    if (alpn) SSL_set_alpn_protos(client_.ssl, reinterpret_cast<const unsigned char*>(alpn), unsigned(strlen(alpn)));
  }

  void TearDown() override {
    server_.reset();
    if (client_fd_ >= 0) close(client_fd_);
  }

  // Drives both ends until the handshake is done; false if either failed.
  bool handshake() {
    bool client_done = false, server_done = false;
    for (int i = 0; i < 100 && !(client_done && server_done); ++i) {
      if (!client_done) {
        int r = SSL_do_handshake(client_.ssl);
        if (r == 1) client_done = true;
        else if (SSL_get_error(client_.ssl, r) != SSL_ERROR_WANT_READ) return false;
      }
      if (!server_done) {
        auto r = server_->handshake();
        if (r.status == IoStatus::ok) server_done = true;
        else if (r.status != IoStatus::again) return false;
      }
    }
    return client_done && server_done;
  }

  // Reads from the client until `n` bytes came (pumping `server_more` when the
  // server side is blocked); returns them.
  std::string client_read(size_t n) {
    std::string out;
    char buf[65536];
    for (int spins = 0; out.size() < n && spins < 100000; ++spins) {
      int r = SSL_read(client_.ssl, buf, sizeof buf);
      if (r > 0) {
        out.append(buf, size_t(r));
        record_sizes_.push_back(size_t(r));
        continue;
      }
      if (pump_) pump_();
    }
    return out;
  }

  std::string subject_cn() {
    X509* peer = SSL_get1_peer_certificate(client_.ssl);
    if (!peer) return "";
    char buf[256] = {};
    X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, buf, sizeof buf);
    X509_free(peer);
    return buf;
  }

  std::string conf_a(const std::string& listen_extra = "", const std::string& more = "") {
    return "server { listen 127.0.0.1:1 ssl" + listen_extra + "; server_name a.test; ssl_certificate a.crt; "
           "ssl_certificate_key a.key; " + more + " }";
  }

  TlsDir dir_;
  std::shared_ptr<const config::Config> config_;
  std::unique_ptr<TlsTransport> server_;
  Client client_;
  int client_fd_ = -1;
  std::function<void()> pump_;
  std::vector<size_t> record_sizes_;
};

TEST_F(TlsTransportTest, HandshakeThenBytesBothWays) {
  start(conf_a(), "a.test");
  ASSERT_TRUE(handshake());
  EXPECT_TRUE(server_->is_tls());
  EXPECT_FALSE(server_->plain_http());
  auto info = server_->tls_info();
  EXPECT_EQ(info.protocol, "TLSv1.3");
  EXPECT_EQ(info.server_name, "a.test");
  EXPECT_FALSE(info.session_reused);
  EXPECT_FALSE(info.cipher.empty());

  ASSERT_EQ(SSL_write(client_.ssl, "GET / HTTP/1.1\r\n\r\n", 18), 18);
  char buf[100];
  IoResult r;
  for (int i = 0; i < 10; ++i) {
    r = server_->read(buf, sizeof buf);
    if (r.status == IoStatus::ok) break;
  }
  ASSERT_EQ(r.status, IoStatus::ok);
  EXPECT_EQ(std::string(buf, r.bytes), "GET / HTTP/1.1\r\n\r\n");
  r = server_->read(buf, sizeof buf);
  EXPECT_EQ(r.status, IoStatus::again);
  EXPECT_FALSE(server_->wants_write());

  iovec iov[2] = {{const_cast<char*>("HTTP/1.1 200 OK\r\n\r\n"), 19}, {const_cast<char*>("body"), 4}};
  auto w = server_->writev(iov, 2, false);
  ASSERT_EQ(w.status, IoStatus::ok);
  EXPECT_EQ(w.bytes, 23u);
  EXPECT_EQ(client_read(23), "HTTP/1.1 200 OK\r\n\r\nbody");

  // The client's close_notify is the end of the stream.
  SSL_shutdown(client_.ssl);
  r = server_->read(buf, sizeof buf);
  EXPECT_EQ(r.status, IoStatus::eof);
}

TEST_F(TlsTransportTest, SniPicksTheServerAndItsCertificate) {
  std::string b = "server { listen 127.0.0.1:1 ssl; server_name b.test; ssl_certificate b.crt; "
                  "ssl_certificate_key b.key; }";
  start(conf_a() + b, "B.Test.");
  ASSERT_TRUE(handshake());
  EXPECT_EQ(subject_cn(), "b.test");
  EXPECT_EQ(server_->server().names[0].name, "b.test");
  EXPECT_EQ(server_->tls_info().server_name, "b.test");
}

TEST_F(TlsTransportTest, UnknownOrNoSniGetsTheDefaultServer) {
  std::string b = "server { listen 127.0.0.1:1 ssl; server_name b.test; ssl_certificate b.crt; "
                  "ssl_certificate_key b.key; }";
  start(conf_a() + b, "c.test");
  ASSERT_TRUE(handshake());
  EXPECT_EQ(subject_cn(), "a.test");
}

TEST_F(TlsTransportTest, AlpnHttp11ByDefault) {
  start(conf_a(), "a.test", "\x02h2\x08http/1.1");
  ASSERT_TRUE(handshake());
  EXPECT_EQ(server_->alpn(), "http/1.1");
}

TEST_F(TlsTransportTest, AlpnH2WhenTheListenHasHttp2) {
  start(conf_a(" http2"), "a.test", "\x08http/1.1\x02h2");
  ASSERT_TRUE(handshake());
  EXPECT_EQ(server_->alpn(), "h2");  // ours first: the server's preference
}

TEST_F(TlsTransportTest, AlpnWithNothingInCommonFails) {
  start(conf_a(), "a.test", "\x02h2");
  EXPECT_FALSE(handshake());
  EXPECT_GT(TlsTransport::failed_handshakes(), 0u);
}

TEST_F(TlsTransportTest, PlainHttpIsDetectedAndPassedThrough) {
  start(conf_a());
  ASSERT_EQ(write(client_fd_, "GET / HTTP/1.1\r\n", 16), 16);
  auto h = server_->handshake();
  ASSERT_EQ(h.status, IoStatus::ok);
  EXPECT_TRUE(server_->plain_http());
  EXPECT_FALSE(server_->is_tls());
  char buf[64];
  auto r = server_->read(buf, sizeof buf);
  ASSERT_EQ(r.status, IoStatus::ok);
  EXPECT_EQ(std::string(buf, r.bytes), "GET / HTTP/1.1\r\n");
  iovec iov{const_cast<char*>("HTTP/1.1 400"), 12};
  ASSERT_EQ(server_->writev(&iov, 1, false).bytes, 12u);
  ASSERT_EQ(read(client_fd_, buf, sizeof buf), 12);
}

TEST_F(TlsTransportTest, PeerThatClosesBeforeAnyByteIsNotAFailure) {
  start(conf_a());
  uint64_t before = TlsTransport::failed_handshakes();
  shutdown(client_fd_, SHUT_WR);
  EXPECT_EQ(server_->handshake().status, IoStatus::eof);
  EXPECT_EQ(TlsTransport::failed_handshakes(), before);
}

TEST_F(TlsTransportTest, GarbageAfterAHandshakeByteFails) {
  start(conf_a());
  std::string junk = "\x16\x03\x01\x00\x05hello";  // a ClientHello cut short, then the end
  ASSERT_EQ(write(client_fd_, junk.data(), junk.size()), ssize_t(junk.size()));
  shutdown(client_fd_, SHUT_WR);
  uint64_t before = TlsTransport::failed_handshakes();
  auto r = server_->handshake();
  EXPECT_EQ(r.status, IoStatus::error);
  EXPECT_EQ(TlsTransport::failed_handshakes(), before + 1);
}

// A big response through a small socket buffer: writes stop with `again`
// and are retried from the caller's (same) bytes until all arrive intact.
TEST_F(TlsTransportTest, BlockedWritesResumeWithTheSameBytes) {
  start(conf_a());
  ASSERT_TRUE(handshake());
  int small = 8192;
  setsockopt(server_->fd(), SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
  std::string body;
  for (int i = 0; body.size() < 1024 * 1024; ++i) body += std::to_string(i) + ",";
  size_t sent = 0;
  int agains = 0;
  pump_ = [&] {
    while (sent < body.size()) {
      iovec iov[2] = {{body.data() + sent, std::min<size_t>(5000, body.size() - sent)}, {nullptr, 0}};
      if (sent + iov[0].iov_len < body.size()) {
        iov[1].iov_base = body.data() + sent + iov[0].iov_len;
        iov[1].iov_len = body.size() - sent - iov[0].iov_len;
      }
      auto w = server_->writev(iov, iov[1].iov_len ? 2 : 1, false);
      if (w.status == IoStatus::again) {
        ++agains;
        EXPECT_TRUE(server_->wants_write());
        return;
      }
      ASSERT_EQ(w.status, IoStatus::ok);
      sent += w.bytes;
    }
  };
  pump_();
  EXPECT_EQ(client_read(body.size()), body);
  EXPECT_GT(agains, 0);
}

// A file sent to a reader that stops: records sealed but not taken by the
// socket wait, and the sendfile calls that follow (offering the same range
// again) neither lose nor repeat a byte; the head held for the first record
// goes out once.
TEST_F(TlsTransportTest, BlockedFileSendResumesWithTheSameBytes) {
  start(conf_a());
  ASSERT_TRUE(handshake());
  int small = 8192;
  setsockopt(server_->fd(), SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
  std::string content;
  for (int i = 0; content.size() < 700 * 1024; ++i) content += std::to_string(i) + ";";
  std::string path = dir_.write("big.bin", content);
  int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::string head = "HTTP/1.1 200 OK\r\n\r\n";
  iovec iov{head.data(), head.size()};
  auto w = server_->writev(&iov, 1, true);
  ASSERT_EQ(w.status, IoStatus::ok);
  ASSERT_EQ(w.bytes, head.size());
  size_t off = 0;
  int agains = 0;
  pump_ = [&] {
    while (off < content.size()) {
      auto r = server_->sendfile(fd, int64_t(off), content.size() - off);
      if (r.status == IoStatus::again) {
        ++agains;
        EXPECT_TRUE(server_->wants_write());
        return;
      }
      ASSERT_EQ(r.status, IoStatus::ok);
      off += r.bytes;
    }
  };
  pump_();
  EXPECT_EQ(client_read(head.size() + content.size()), head + content);
  EXPECT_EQ(off, content.size());
  EXPECT_GT(agains, 0);
  close(fd);
}

// A head written with `more` shares its record with the file that follows;
// file ranges are read through the record buffer.
TEST_F(TlsTransportTest, HeadAndFileShareRecordsAndStartSmall) {
  start(conf_a());
  ASSERT_TRUE(handshake());
  std::string content;
  for (int i = 0; content.size() < 50000; ++i) content += char('a' + i % 26);
  std::string path = dir_.write("f.bin", content);
  int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 50000\r\n\r\n";
  iovec iov{head.data(), head.size()};
  auto w = server_->writev(&iov, 1, true);
  ASSERT_EQ(w.status, IoStatus::ok);
  ASSERT_EQ(w.bytes, head.size());  // held for the file's first record
  size_t off = 0;
  while (off < content.size()) {
    auto r = server_->sendfile(fd, int64_t(off), content.size() - off);
    ASSERT_EQ(r.status, IoStatus::ok);
    off += r.bytes;
  }
  close(fd);
  EXPECT_EQ(client_read(head.size() + content.size()), head + content);
  ASSERT_GE(record_sizes_.size(), 2u);
  EXPECT_LE(record_sizes_[0], 1369u);  // one TCP segment first
  EXPECT_EQ(record_sizes_[1], 16384u);  // then full records
}

TEST_F(TlsTransportTest, BufferSizeBoundsRecords) {
  start(conf_a("", "ssl_buffer_size 4k;"));
  ASSERT_TRUE(handshake());
  std::string body(20000, 'x');
  iovec iov{body.data(), body.size()};
  size_t sent = 0;
  while (sent < body.size()) {
    iov.iov_base = body.data() + sent;
    iov.iov_len = body.size() - sent;
    auto w = server_->writev(&iov, 1, false);
    ASSERT_EQ(w.status, IoStatus::ok);
    sent += w.bytes;
  }
  EXPECT_EQ(client_read(body.size()), body);
  for (size_t i = 1; i < record_sizes_.size(); ++i) EXPECT_LE(record_sizes_[i], 4096u);
}

}  // namespace
}  // namespace torii::net
