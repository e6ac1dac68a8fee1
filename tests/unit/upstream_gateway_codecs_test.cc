// The gateway wire codecs as pure transforms: FastCGI records both ways,
// the CGI response head, the uwsgi packet; and the fastcgi_*/uwsgi_*
// directives' inheritance.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/cgi_config.h"
#include "config/config.h"
#include "config/loader.h"
#include "upstream/cgi_head.h"
#include "upstream/fastcgi/record.h"
#include "upstream/uwsgi/packet.h"

namespace torii::upstream {
namespace {

namespace fcgi = fastcgi;

struct Collect final : fcgi::DecoderEvents {
  std::string out;
  std::vector<std::string> err;
  std::string partial;
  void on_stdout(std::string_view d) override { out.append(d); }
  void on_stderr(std::string_view d, bool end) override {
    partial.append(d);
    if (end) {
      err.push_back(partial);
      partial.clear();
    }
  }
};

std::string end_request(uint32_t app_status) {
  std::string r;
  fcgi::append_header(r, fcgi::RecordType::end_request, 8);
  const char body[8] = {char(app_status >> 24), char(app_status >> 16), char(app_status >> 8), char(app_status),
                        0, 0, 0, 0};
  r.append(body, 8);
  return r;
}

TEST(FastcgiRecords, BeginParamsStdin) {
  std::string out;
  fcgi::append_begin_request(out, true);
  ASSERT_EQ(out.size(), 16u);
  EXPECT_EQ(out[0], 1);   // version
  EXPECT_EQ(out[1], 1);   // BEGIN_REQUEST
  EXPECT_EQ(out[3], 1);   // request id 1
  EXPECT_EQ(out[5], 8);   // content length
  EXPECT_EQ(out[9], 1);   // role responder
  EXPECT_EQ(out[10], 1);  // FCGI_KEEP_CONN

  std::string nv;
  fcgi::append_name_value(nv, "SCRIPT_FILENAME", std::string(200, 'x'));
  // A short name has a 1-byte length, a long value a 4-byte one with the high bit.
  EXPECT_EQ(nv[0], 15);
  EXPECT_EQ(uint8_t(nv[1]), 0x80);
  EXPECT_EQ(uint8_t(nv[4]), 200);
  EXPECT_EQ(nv.size(), 1u + 4 + 15 + 200);

  std::string stdin_records;
  fcgi::append_stream(stdin_records, fcgi::RecordType::stdin_, std::string(70000, 'b'));
  // 65535 + 4465 in two records.
  EXPECT_EQ(stdin_records.size(), 2 * fcgi::kHeaderSize + 70000);
  EXPECT_EQ(uint8_t(stdin_records[4]), 0xff);
  EXPECT_EQ(uint8_t(stdin_records[5]), 0xff);
}

TEST(FastcgiRecords, DecodesStdoutStderrEndInAnyPieces) {
  std::string in;
  fcgi::append_stream(in, fcgi::RecordType::stdout_, "Content-Type: text/plain\r\n\r\nhello");
  // A padded STDERR record.
  std::string err = "PHP message: oops\n";
  in.push_back(1);
  in.push_back(7);
  in.push_back(0);
  in.push_back(1);
  in.push_back(0);
  in.push_back(char(err.size()));
  in.push_back(6);
  in.push_back(0);
  in += err + std::string(6, '\0');
  fcgi::append_stream(in, fcgi::RecordType::stdout_, " world");
  fcgi::append_end_of_stream(in, fcgi::RecordType::stdout_);
  in += end_request(0);
  in += "after";
  for (size_t step : {size_t(1), size_t(3), size_t(7), in.size()}) {
    fcgi::Decoder dec;
    Collect c;
    size_t at = 0;
    fcgi::Decoder::Status st = fcgi::Decoder::Status::more;
    while (st == fcgi::Decoder::Status::more && at < in.size()) {
      size_t consumed = 0;
      st = dec.feed(std::string_view(in).substr(at, step), consumed, c);
      at += consumed;
    }
    ASSERT_EQ(st, fcgi::Decoder::Status::done) << step;
    EXPECT_EQ(in.substr(at), "after") << step;  // nothing past END_REQUEST is taken
    EXPECT_EQ(c.out, "Content-Type: text/plain\r\n\r\nhello world");
    ASSERT_EQ(c.err.size(), 1u);
    EXPECT_EQ(c.err[0], err);
  }
}

TEST(FastcgiRecords, ProtocolErrors) {
  Collect c;
  size_t consumed = 0;
  fcgi::Decoder bad_version;
  EXPECT_EQ(bad_version.feed(std::string("\x02\x06\x00\x01\x00\x00\x00\x00", 8), consumed, c),
            fcgi::Decoder::Status::error);
  fcgi::Decoder bad_type;
  EXPECT_EQ(bad_type.feed(std::string("\x01\x05\x00\x01\x00\x00\x00\x00", 8), consumed, c),
            fcgi::Decoder::Status::error);
  EXPECT_STREQ(bad_type.error(), "upstream sent invalid FastCGI record type");
  fcgi::Decoder bad_id;
  EXPECT_EQ(bad_id.feed(std::string("\x01\x06\x00\x02\x00\x00\x00\x00", 8), consumed, c),
            fcgi::Decoder::Status::error);
  fcgi::Decoder short_end;
  EXPECT_EQ(short_end.feed(std::string("\x01\x03\x00\x01\x00\x04\x00\x00", 8), consumed, c),
            fcgi::Decoder::Status::error);
}

TEST(CgiHead, StatusLocationAndDefault) {
  http1::ParsedResponse r;
  CgiHeadParser a(4096, false);
  a.append("Status: 404 Not Found\r\nContent-Type: text/html\r\n\r\nbody");
  ASSERT_EQ(a.parse(r), http1::ParseStatus::done);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.reason, "Not Found");
  ASSERT_EQ(r.headers.size(), 1u);  // Status is not passed on
  EXPECT_EQ(r.headers[0].name, "Content-Type");
  EXPECT_EQ(a.rest(), "body");

  CgiHeadParser b(4096, false);
  b.append("Location: /there\n\n");
  ASSERT_EQ(b.parse(r), http1::ParseStatus::done);
  EXPECT_EQ(r.status, 302);

  CgiHeadParser c(4096, false);
  c.append("X-A: 1\r\n");
  EXPECT_EQ(c.parse(r), http1::ParseStatus::need_more);
  c.append("\r\n");
  ASSERT_EQ(c.parse(r), http1::ParseStatus::done);
  EXPECT_EQ(r.status, 200);

  CgiHeadParser d(4096, false);
  d.append("Status: abc\r\n\r\n");
  EXPECT_EQ(d.parse(r), http1::ParseStatus::error);

  CgiHeadParser e(64, false);
  e.append(std::string(200, 'a'));
  EXPECT_EQ(e.parse(r), http1::ParseStatus::error);
}

TEST(CgiHead, StatusLineWhereAllowed) {
  http1::ParsedResponse r;
  CgiHeadParser a(4096, true);
  a.append("HTT");
  EXPECT_EQ(a.parse(r), http1::ParseStatus::need_more);
  a.append("P/1.1 201 Created\r\nX: y\r\n\r\n");
  ASSERT_EQ(a.parse(r), http1::ParseStatus::done);
  EXPECT_EQ(r.status, 201);
  CgiHeadParser b(4096, true);
  b.append("Status: 203 Fine\r\n\r\n");
  ASSERT_EQ(b.parse(r), http1::ParseStatus::done);
  EXPECT_EQ(r.status, 203);
}

TEST(UwsgiPacket, RoundTrip) {
  std::string out = "pre";
  uwsgi::PacketBuilder b(out);
  ASSERT_TRUE(b.add("REQUEST_METHOD", "GET"));
  ASSERT_TRUE(b.add("EMPTY", ""));
  ASSERT_TRUE(b.finish(5, 9));
  std::string_view packet = std::string_view(out).substr(3);
  EXPECT_EQ(packet[0], 5);
  EXPECT_EQ(packet[3], 9);
  EXPECT_EQ(size_t(uint8_t(packet[1])), packet.size() - 4);
  uint8_t m1 = 0;
  uint8_t m2 = 0;
  size_t consumed = 0;
  std::vector<std::pair<std::string, std::string>> vars;
  ASSERT_TRUE(uwsgi::parse_packet(packet, m1, m2, consumed,
                                  [&](std::string_view k, std::string_view v) { vars.emplace_back(k, v); }));
  EXPECT_EQ(consumed, packet.size());
  ASSERT_EQ(vars.size(), 2u);
  EXPECT_EQ(vars[0].first, "REQUEST_METHOD");
  EXPECT_EQ(vars[1].second, "");

  std::string big;
  uwsgi::PacketBuilder too_big(big);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(too_big.add("K", std::string(4000, 'v')));
  EXPECT_FALSE(too_big.finish(0, 0));  // over 64 KB of vars
}

TEST(GatewayConfig, ParamsReplaceInheritedListAndPassIsNotInherited) {
  auto r = config::load_from_string(R"(
events {}
http {
  fastcgi_param A a;
  fastcgi_param B b if_not_empty;
  uwsgi_param U u;
  server {
    listen 127.0.0.1:8080;
    location /inherit { fastcgi_pass 127.0.0.1:9000; }
    location /own {
      fastcgi_param C c;
      fastcgi_pass unix:/run/php.sock;
      fastcgi_split_path_info ^(.+\.php)(/.+)$;
      location /own/nested { }
    }
    location /wsgi { uwsgi_pass uwsgi://127.0.0.1:3031; uwsgi_modifier1 30; }
  }
}
)",
                                    "/p/");
  ASSERT_TRUE(r.ok()) << r.error();
  const auto& server = *(*r)->servers[0];
  auto find = [&](std::string_view p) { return &config::find_location(server, p, nullptr)->settings; };
  const auto* inherit = find("/inherit");
  ASSERT_TRUE(inherit->fastcgi && inherit->fastcgi->upstream.upstream);
  ASSERT_EQ(inherit->fastcgi->params.size(), 2u);
  EXPECT_TRUE(inherit->fastcgi->params[1].if_not_empty);
  const auto* own = find("/own");
  ASSERT_EQ(own->fastcgi->params.size(), 1u);
  EXPECT_EQ(own->fastcgi->params[0].name, "C");
  EXPECT_TRUE(own->fastcgi->split_path_info);
  const auto* nested = find("/own/nested");
  EXPECT_FALSE(nested->fastcgi->upstream.upstream);  // fastcgi_pass belongs to its location
  EXPECT_EQ(nested->fastcgi->params.size(), 1u);     // the rest is inherited
  const auto* wsgi = find("/wsgi");
  ASSERT_TRUE(wsgi->uwsgi && wsgi->uwsgi->upstream.upstream);
  EXPECT_EQ(wsgi->uwsgi->modifier1, 30);
  EXPECT_EQ(wsgi->uwsgi->params.size(), 1u);

  auto bad = config::load_from_string(
      "events {} http { server { location / { fastcgi_split_path_info ^(.+)$; } } }", "/p/");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("must have 2 captures"), std::string::npos) << bad.error();
}

}  // namespace
}  // namespace torii::upstream
