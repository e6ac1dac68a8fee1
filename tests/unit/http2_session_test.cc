// The HTTP/2 session driven in memory by an nghttp2 client session: no
// socket, no event loop. Checks the request model, flow control reaching
// the handler, and the defences.
#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "config/loader.h"
#include "core/worker.h"
#include "http/exchange.h"
#include "http2/frame_scanner.h"
#include "http2/session.h"
#include "http2/stream_ledger.h"

namespace torii::http2 {
namespace {

class FakeHost : public SessionHost {
 public:
  std::function<void(http::Exchange&)> handler;
  std::vector<std::string> logged;
  int64_t now = 1000;
  http::WorkerServices svc;

  void run_request(http::Exchange& ex) override { handler(ex); }
  void log_request(http::Exchange& ex) override { logged.push_back(std::string(ex.req.path)); }
  void wake() override {}
  int64_t now_ms() override { return now; }
  http::WorkerServices& services() override { return svc; }
};

struct ClientStream {
  int status = 0;
  std::string body;
  bool closed = false;
  uint32_t error = 0;
};

// An nghttp2 client talking to the session through two strings.
class Harness {
 public:
  explicit Harness(const std::string& server_extra = "", int32_t client_window = 65535) {
    auto cfg = config::load_from_string("events {} http { server { listen 127.0.0.1:1; " + server_extra + " } }",
                                        "/tmp/", "");
    EXPECT_TRUE(cfg.ok()) << cfg.error();
    config_ = *cfg;
    binding_ = std::make_shared<core::ListenBinding>();
    binding_->config = config_;
    binding_->group = &config_->listen_groups[0];
    info_.remote_addr = "127.0.0.1";
    session_ = std::make_unique<Session>(host, info_, binding_);
    EXPECT_TRUE(session_->start());

    nghttp2_session_callbacks* cbs;
    nghttp2_session_callbacks_new(&cbs);
    nghttp2_session_callbacks_set_on_header_callback(
        cbs, [](nghttp2_session*, const nghttp2_frame* f, const uint8_t* name, size_t namelen, const uint8_t* value,
                size_t valuelen, uint8_t, void* u) {
          auto* self = static_cast<Harness*>(u);
          if (std::string_view(reinterpret_cast<const char*>(name), namelen) == ":status")
            self->streams[f->hd.stream_id].status = std::stoi(std::string(reinterpret_cast<const char*>(value), valuelen));
          return 0;
        });
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
        cbs, [](nghttp2_session*, uint8_t, int32_t id, const uint8_t* data, size_t len, void* u) {
          static_cast<Harness*>(u)->streams[id].body.append(reinterpret_cast<const char*>(data), len);
          return 0;
        });
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, [](nghttp2_session*, int32_t id, uint32_t err, void* u) {
      auto& s = static_cast<Harness*>(u)->streams[id];
      s.closed = true;
      s.error = err;
      return 0;
    });
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, [](nghttp2_session*, const nghttp2_frame* f, void* u) {
      if (f->hd.type == NGHTTP2_GOAWAY) static_cast<Harness*>(u)->goaway_code = int(f->goaway.error_code);
      return 0;
    });
    nghttp2_option* opt;
    nghttp2_option_new(&opt);
    nghttp2_option_set_no_auto_window_update(opt, manual_window_ = client_window != 65535);
    nghttp2_session_client_new2(&client_, cbs, this, opt);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cbs);
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, uint32_t(client_window)}};
    nghttp2_submit_settings(client_, NGHTTP2_FLAG_NONE, iv, 1);
  }
  ~Harness() {
    nghttp2_session_del(client_);
    session_.reset();
  }

  int32_t get(const std::string& path, std::vector<std::pair<std::string, std::string>> extra = {},
              nghttp2_data_provider* body = nullptr) {
    std::vector<std::pair<std::string, std::string>> h = {
        {":method", body ? "POST" : "GET"}, {":scheme", "http"}, {":path", path}, {":authority", "Example.COM:8080"}};
    for (auto& e : extra) h.push_back(e);
    std::vector<nghttp2_nv> nva;
    for (auto& [n, v] : h)
      nva.push_back({(uint8_t*)n.data(), (uint8_t*)v.data(), n.size(), v.size(), NGHTTP2_NV_FLAG_NONE});
    return nghttp2_submit_request(client_, nullptr, nva.data(), nva.size(), body, nullptr);
  }

  // Moves bytes both ways until neither side has anything to say.
  void pump() {
    for (int i = 0; i < 1000; ++i) {
      bool moved = false;
      std::string c2s;
      const uint8_t* p;
      ssize_t n;
      while ((n = nghttp2_session_mem_send(client_, &p)) > 0) c2s.append(reinterpret_cast<const char*>(p), size_t(n));
      if (!c2s.empty()) {
        moved = true;
        if (!session_->receive(c2s.data(), c2s.size())) server_closed = true;
      }
      session_->service();
      std::string s2c;
      session_->produce(s2c, 64 * 1024);
      if (!s2c.empty()) {
        moved = true;
        if (to_client) to_client(s2c);
        nghttp2_session_mem_recv(client_, reinterpret_cast<const uint8_t*>(s2c.data()), s2c.size());
      }
      session_->collect_closed();  // the end of the I/O shell's turn
      if (!moved) return;
    }
  }

  nghttp2_session* client() { return client_; }
  Session& session() { return *session_; }

  FakeHost host;
  std::function<void(std::string&)> to_client;  // may rewrite the server's bytes before the client reads them
  std::map<int32_t, ClientStream> streams;
  int goaway_code = -1;
  bool server_closed = false;

 private:
  std::shared_ptr<const config::Config> config_;
  std::shared_ptr<core::ListenBinding> binding_;
  http::ConnectionInfo info_;
  std::unique_ptr<Session> session_;
  nghttp2_session* client_ = nullptr;
  bool manual_window_ = false;
};

void respond(http::Exchange& ex, const std::string& body) {
  http::ResponseHead head;
  head.content_length = int64_t(body.size());
  ex.send_head(std::move(head));
  ex.send_body(body);
  ex.finish();
}

// Renames SETTINGS_MAX_CONCURRENT_STREAMS in the server's SETTINGS to an
// identifier the client ignores, and returns its value (0: not there).
// nghttp2 as a client holds requests back to honour the limit; one that
// never learns it sends them all, as a client ignoring the limit does.
uint32_t hide_max_streams(std::string& s2c) {
  auto be = [&](size_t at, size_t n) {
    uint32_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | uint8_t(s2c[at + i]);
    return v;
  };
  for (size_t at = 0; at + 9 <= s2c.size(); at += 9 + be(at, 3)) {
    const size_t len = be(at, 3);
    if (uint8_t(s2c[at + 3]) != NGHTTP2_SETTINGS || (s2c[at + 4] & NGHTTP2_FLAG_ACK)) continue;
    for (size_t e = at + 9; e + 6 <= at + 9 + len && e + 6 <= s2c.size(); e += 6) {
      if (be(e, 2) != NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS) continue;
      s2c[e] = char(0xf0);
      s2c[e + 1] = char(0x0e);
      return be(e + 2, 4);
    }
  }
  return 0;
}

TEST(Http2Session, RequestModel) {
  Harness h;
  std::string seen_host, seen_cookie, seen_path, seen_query, seen_http_host;
  int version = 0;
  h.host.handler = [&](http::Exchange& ex) {
    seen_host = ex.req.host;
    seen_path = ex.req.path;
    seen_query = std::string(ex.req.query);
    version = ex.req.version;
    if (auto* c = ex.req.find(http::HeaderToken::cookie)) seen_cookie = std::string(c->value);
    if (auto* c = ex.req.find(http::HeaderToken::host)) seen_http_host = std::string(c->value);
    respond(ex, "hi");
  };
  int32_t id = h.get("/a/../b%20c?x=1", {{"cookie", "a=1"}, {"cookie", "b=2"}});
  h.pump();
  EXPECT_EQ(h.streams[id].status, 200);
  EXPECT_EQ(h.streams[id].body, "hi");
  EXPECT_EQ(seen_host, "example.com");
  EXPECT_EQ(seen_http_host, "Example.COM:8080");
  EXPECT_EQ(seen_path, "/b c");
  EXPECT_EQ(seen_query, "x=1");
  EXPECT_EQ(seen_cookie, "a=1; b=2");
  EXPECT_EQ(version, 20);
  ASSERT_EQ(h.host.logged.size(), 1u);
}

TEST(Http2Session, ConnectionHeadersAreRefused) {
  Harness h;
  bool ran = false;
  h.host.handler = [&](http::Exchange& ex) { ran = true; respond(ex, "x"); };
  int32_t id = h.get("/", {{"connection", "keep-alive"}});
  h.pump();
  EXPECT_FALSE(ran);
  EXPECT_TRUE(h.streams[id].closed);
  EXPECT_EQ(h.streams[id].error, uint32_t(NGHTTP2_PROTOCOL_ERROR));
}

TEST(Http2Session, SlowReaderBoundsWhatIsQueued) {
  // The client never opens its 16 KB window: a streaming handler that waits
  // for the drain callback must not get ahead of it.
  Harness h("", 16384);
  http::Exchange* ex_ptr = nullptr;
  int produced = 0;
  std::function<void()> pump_more;
  h.host.handler = [&](http::Exchange& ex) {
    ex_ptr = &ex;
    http::ResponseHead head;
    ex.send_head(std::move(head));
    pump_more = [&] {
      while (ex_ptr->queued_bytes() < 64 * 1024 && produced < 100) {
        ex_ptr->send_body(std::string(8192, 'x'));
        ++produced;
      }
      if (produced < 100) ex_ptr->set_drain_callback(pump_more);
      else ex_ptr->finish();
    };
    pump_more();
  };
  int32_t id = h.get("/stream");
  h.pump();
  EXPECT_EQ(h.streams[id].status, 200);
  EXPECT_EQ(h.streams[id].body.size(), 16384u);
  EXPECT_LT(produced, 20);  // about 16 KB sent plus 64 KB queued, not 800 KB
  EXPECT_TRUE(h.session().stalled());
  // The client reads: the rest flows.
  for (int i = 0; i < 200 && !h.streams[id].closed; ++i) {
    nghttp2_session_consume(h.client(), id, h.streams[id].body.size());
    nghttp2_session_consume_connection(h.client(), 0);
    h.pump();
  }
  EXPECT_EQ(h.streams[id].body.size(), 100u * 8192);
}

class PausingReader : public http::BodyReader {
 public:
  std::string got;
  bool ended = false;
  bool pause = true;
  bool on_body_data(std::string_view d) override {
    got.append(d);
    return !pause;
  }
  void on_body_end() override { ended = true; }
};

TEST(Http2Session, RequestBodyBackPressure) {
  Harness h;
  PausingReader reader;
  http::Exchange* ex_ptr = nullptr;
  h.host.handler = [&](http::Exchange& ex) {
    ex_ptr = &ex;
    ex.read_body(&reader);
  };
  static std::string payload(1 << 20, 'p');
  static size_t offset;
  offset = 0;
  nghttp2_data_provider prd;
  prd.source.ptr = nullptr;
  prd.read_callback = [](nghttp2_session*, int32_t, uint8_t* buf, size_t len, uint32_t* flags, nghttp2_data_source*,
                         void*) -> ssize_t {
    size_t n = std::min(len, payload.size() - offset);
    memcpy(buf, payload.data() + offset, n);
    offset += n;
    if (offset == payload.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return ssize_t(n);
  };
  int32_t id = h.get("/upload", {}, &prd);
  h.pump();
  // Paused after the first piece: the client is held to the stream window.
  EXPECT_LT(offset, 300u * 1024);
  reader.pause = false;
  ex_ptr->resume_body();
  h.pump();
  EXPECT_TRUE(reader.ended);
  EXPECT_EQ(reader.got.size(), payload.size());
  respond(*ex_ptr, "done");
  h.pump();
  EXPECT_EQ(h.streams[id].body, "done");
}

TEST(Http2Session, RapidResetEndsTheConnection) {
  Harness h;
  int ran = 0;
  h.host.handler = [&](http::Exchange& ex) { ++ran; respond(ex, "x"); };
  // HEADERS then RST_STREAM, 400 times, arriving in one read.
  std::string wire;
  auto drain_client = [&] {
    const uint8_t* p;
    ssize_t n;
    while ((n = nghttp2_session_mem_send(h.client(), &p)) > 0) wire.append(reinterpret_cast<const char*>(p), size_t(n));
  };
  for (int i = 0; i < 400; ++i) {
    int32_t id = h.get("/r");
    drain_client();
    nghttp2_submit_rst_stream(h.client(), NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
    drain_client();
  }
  h.server_closed = !h.session().receive(wire.data(), wire.size());
  h.pump();
  EXPECT_TRUE(h.server_closed);
  EXPECT_EQ(h.goaway_code, int(NGHTTP2_ENHANCE_YOUR_CALM));
  EXPECT_LT(ran, 50);
}

TEST(Http2Session, HeaderListLimitAnswers431) {
  Harness h("large_client_header_buffers 2 1k;");
  bool ran = false;
  h.host.handler = [&](http::Exchange& ex) { ran = true; respond(ex, "x"); };
  std::vector<std::pair<std::string, std::string>> extra;
  for (int i = 0; i < 10; ++i) extra.push_back({"x-h" + std::to_string(i), std::string(400, 'v')});
  int32_t id = h.get("/", extra);
  h.pump();
  EXPECT_FALSE(ran);
  EXPECT_EQ(h.streams[id].status, 431);
}

TEST(Http2Session, KeepaliveRequestsSendsGoaway) {
  Harness h("keepalive_requests 2;");
  h.host.handler = [&](http::Exchange& ex) { respond(ex, "x"); };
  int32_t a = h.get("/1");
  int32_t b = h.get("/2");
  h.pump();
  EXPECT_EQ(h.streams[a].status, 200);
  EXPECT_EQ(h.streams[b].status, 200);
  EXPECT_EQ(h.goaway_code, int(NGHTTP2_NO_ERROR));
  EXPECT_TRUE(h.session().done());
}

TEST(Http2Session, AdvertisesMaxConcurrentStreams) {
  Harness h("http2_max_concurrent_streams 2;");
  h.pump();
  EXPECT_EQ(nghttp2_session_get_remote_settings(h.client(), NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS), 2u);
  // The client ACKed our SETTINGS (NO_RFC7540_PRIORITIES took effect), and
  // nghttp2 underneath still has no limit of its own: over it, it would
  // end the whole connection.
  nghttp2_session* server = h.session().ng();
  EXPECT_EQ(nghttp2_session_get_local_settings(server, NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES), 1u);
  EXPECT_EQ(nghttp2_session_get_local_settings(server, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS),
            0xffffffffu);  // nghttp2's default: unlimited
}

TEST(Http2Session, ExcessStreamIsRefusedAfterAck) {
  Harness h("http2_max_concurrent_streams 2;");
  uint32_t advertised = 0;
  h.to_client = [&](std::string& s2c) {
    if (!advertised) advertised = hide_max_streams(s2c);
  };
  h.pump();  // SETTINGS both ways, both ACKed
  ASSERT_EQ(advertised, 2u);
  ASSERT_EQ(nghttp2_session_get_local_settings(h.session().ng(), NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES), 1u);

  std::vector<http::Exchange*> held;  // handlers that have not answered yet
  h.host.handler = [&](http::Exchange& ex) { held.push_back(&ex); };
  int32_t a = h.get("/1");
  int32_t b = h.get("/2");
  int32_t c = h.get("/3");
  h.pump();
  ASSERT_EQ(held.size(), 2u);
  EXPECT_TRUE(h.streams[c].closed);
  EXPECT_EQ(h.streams[c].error, uint32_t(NGHTTP2_REFUSED_STREAM));
  EXPECT_FALSE(h.streams[a].closed);
  EXPECT_FALSE(h.streams[b].closed);
  EXPECT_EQ(h.goaway_code, -1);
  EXPECT_FALSE(h.server_closed);
  EXPECT_EQ(h.session().open_streams(), 2u);

  for (http::Exchange* ex : held) respond(*ex, "ok");
  h.pump();
  EXPECT_EQ(h.streams[a].status, 200);
  EXPECT_EQ(h.streams[a].body, "ok");
  EXPECT_EQ(h.streams[b].status, 200);
  EXPECT_EQ(h.streams[b].body, "ok");
  EXPECT_EQ(h.host.logged.size(), 2u);  // the refused stream never reached a handler

  // The connection goes on: with room again, a new stream is served.
  h.host.handler = [&](http::Exchange& ex) { respond(ex, "next"); };
  int32_t d = h.get("/4");
  h.pump();
  EXPECT_EQ(h.streams[d].status, 200);
  EXPECT_EQ(h.goaway_code, -1);
}

TEST(Http2Session, ExcessStreamIsRefusedBeforeAck) {
  Harness h("http2_max_concurrent_streams 2;");
  std::vector<http::Exchange*> held;
  h.host.handler = [&](http::Exchange& ex) { held.push_back(&ex); };
  // All three arrive with the client's preface, before our SETTINGS is out.
  int32_t a = h.get("/1");
  int32_t b = h.get("/2");
  int32_t c = h.get("/3");
  h.pump();
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(h.streams[c].error, uint32_t(NGHTTP2_REFUSED_STREAM));
  EXPECT_EQ(h.goaway_code, -1);
  for (http::Exchange* ex : held) respond(*ex, "ok");
  h.pump();
  EXPECT_EQ(h.streams[a].status, 200);
  EXPECT_EQ(h.streams[b].status, 200);
}

TEST(Http2Session, ClientThatKeepsExceedingTheLimitIsCut) {
  Harness h("http2_max_concurrent_streams 2;");
  uint32_t advertised = 0;
  h.to_client = [&](std::string& s2c) {
    if (!advertised) advertised = hide_max_streams(s2c);
  };
  h.pump();
  int ran = 0;
  h.host.handler = [&](http::Exchange&) { ++ran; };  // never answers
  for (int i = 0; i < 300; ++i) h.get("/" + std::to_string(i));
  h.pump();
  EXPECT_LE(ran, 2);  // none, when the abuse arrives in the same read
  EXPECT_TRUE(h.server_closed);
  EXPECT_EQ(h.goaway_code, int(NGHTTP2_ENHANCE_YOUR_CALM));
}


// ---- frames no nghttp2 client would send -------------------------------------

std::string raw_frame(uint8_t type, uint8_t flags, int32_t id, std::string_view payload = {}) {
  std::string f;
  const size_t n = payload.size();
  f += char(n >> 16);
  f += char(n >> 8);
  f += char(n);
  f += char(type);
  f += char(flags);
  f += char(uint32_t(id) >> 24);
  f += char(uint32_t(id) >> 16);
  f += char(uint32_t(id) >> 8);
  f += char(id);
  f.append(payload);
  return f;
}

std::string be32(uint32_t v) { return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; }

// A literal field without indexing, with a literal name (short strings only).
std::string literal_field(std::string_view name, std::string_view value) {
  std::string out(1, '\0');
  out += char(name.size());
  out.append(name);
  out += char(value.size());
  out.append(value);
  return out;
}

std::string raw_request(int32_t id, std::string_view path, bool end_stream) {
  const std::string block = literal_field(":method", end_stream ? "GET" : "POST") + literal_field(":scheme", "http") +
                            literal_field(":path", path) + literal_field(":authority", "localhost");
  return raw_frame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS | (end_stream ? NGHTTP2_FLAG_END_STREAM : 0), id, block);
}

struct SeenFrame {
  uint8_t type = 0;
  uint8_t flags = 0;
  int32_t id = 0;
  std::string payload;
  uint32_t code() const {  // RST_STREAM's error code, or GOAWAY's
    const size_t at = type == NGHTTP2_GOAWAY ? 4 : 0;
    uint32_t v = 0;
    for (size_t i = at; i < at + 4 && i < payload.size(); ++i) v = (v << 8) | uint8_t(payload[i]);
    return v;
  }
};

// The session fed raw bytes; what it answers, frame by frame.
class RawClient {
 public:
  explicit RawClient(const std::string& server_extra = "") : h(server_extra) {
    send(std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + raw_frame(NGHTTP2_SETTINGS, 0, 0));
  }
  void ack_settings() { send(raw_frame(NGHTTP2_SETTINGS, NGHTTP2_FLAG_ACK, 0)); }

  void send(const std::string& bytes) {
    if (!h.session().receive(bytes.data(), bytes.size())) server_closed = true;
    for (int i = 0; i < 100; ++i) {
      h.session().service();
      std::string out;
      h.session().produce(out, 1 << 20);
      h.session().collect_closed();
      if (out.empty()) break;
      for (size_t at = 0; at + 9 <= out.size();) {
        SeenFrame f;
        const size_t len = size_t(uint8_t(out[at])) << 16 | size_t(uint8_t(out[at + 1])) << 8 | uint8_t(out[at + 2]);
        f.type = uint8_t(out[at + 3]);
        f.flags = uint8_t(out[at + 4]);
        f.id = int32_t(uint32_t(uint8_t(out[at + 5]) & 0x7f) << 24 | uint32_t(uint8_t(out[at + 6])) << 16 |
                       uint32_t(uint8_t(out[at + 7])) << 8 | uint8_t(out[at + 8]));
        f.payload = out.substr(at + 9, len);
        seen.push_back(f);
        at += 9 + len;
      }
    }
  }
  // The last RST_STREAM code for `id` (-1: none); the GOAWAY code (-1: none).
  int64_t reset(int32_t id) const {
    int64_t code = -1;
    for (const auto& f : seen)
      if (f.type == NGHTTP2_RST_STREAM && f.id == id) code = f.code();
    return code;
  }
  size_t resets(uint32_t code) const {
    size_t n = 0;
    for (const auto& f : seen) n += f.type == NGHTTP2_RST_STREAM && f.code() == code;
    return n;
  }
  int64_t goaway() const {
    for (const auto& f : seen)
      if (f.type == NGHTTP2_GOAWAY) return f.code();
    return -1;
  }
  size_t ended(int32_t id) const {  // response frames of `id` that carried END_STREAM
    size_t n = 0;
    for (const auto& f : seen)
      n += f.id == id && (f.type == NGHTTP2_HEADERS || f.type == NGHTTP2_DATA) && (f.flags & NGHTTP2_FLAG_END_STREAM);
    return n;
  }

  Harness h;
  std::vector<SeenFrame> seen;
  bool server_closed = false;
};

// Answers /ret at once; /hold never.
void ret_or_hold(http::Exchange& ex) {
  if (ex.req.path == "/ret") respond(ex, "x");
}

TEST(Http2Session, DataAfterTheClientsResetIsStreamClosed) {
  RawClient c;
  c.h.host.handler = ret_or_hold;
  c.ack_settings();
  c.send(raw_request(1, "/hold", false) + raw_frame(NGHTTP2_RST_STREAM, 0, 1, be32(NGHTTP2_CANCEL)));
  c.send(raw_frame(NGHTTP2_DATA, 0, 1, "late"));
  EXPECT_EQ(c.reset(1), int64_t(NGHTTP2_STREAM_CLOSED));  // RFC 9113 5.1: a stream error
  EXPECT_EQ(c.goaway(), -1);
  EXPECT_FALSE(c.server_closed);
  // The same when the reset and the DATA arrive in one read.
  c.send(raw_request(3, "/hold", false) + raw_frame(NGHTTP2_RST_STREAM, 0, 3, be32(NGHTTP2_CANCEL)) +
         raw_frame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_END_STREAM, 3, literal_field("x-t", "1")));
  EXPECT_EQ(c.reset(3), int64_t(NGHTTP2_STREAM_CLOSED));
  EXPECT_EQ(c.goaway(), -1);
}

TEST(Http2Session, FramesAfterBothEndsAreAConnectionError) {
  for (uint8_t type : {uint8_t(NGHTTP2_DATA), uint8_t(NGHTTP2_HEADERS)}) {
    RawClient c;
    c.h.host.handler = ret_or_hold;
    c.ack_settings();
    c.send(raw_request(1, "/ret", true));
    ASSERT_EQ(c.ended(1), 1u);
    const std::string payload = type == NGHTTP2_DATA ? "late" : literal_field("x-t", "1");
    c.send(raw_frame(type, NGHTTP2_FLAG_END_HEADERS, 1, payload));
    EXPECT_EQ(c.goaway(), int64_t(NGHTTP2_STREAM_CLOSED)) << int(type);
    EXPECT_TRUE(c.server_closed);
  }
}

TEST(Http2Session, HalfClosedRemoteStreamTakesNoData) {
  RawClient c;
  int ran = 0;
  c.h.host.handler = [&](http::Exchange&) { ++ran; };
  c.ack_settings();
  c.send(raw_request(1, "/hold", true) + raw_frame(NGHTTP2_DATA, NGHTTP2_FLAG_END_STREAM, 1, "x"));
  EXPECT_EQ(c.goaway(), int64_t(NGHTTP2_STREAM_CLOSED));
  EXPECT_EQ(ran, 0);  // the connection is over: the request is not started
  EXPECT_TRUE(c.server_closed);
}

TEST(Http2Session, LowerStreamIdIsAProtocolError) {
  RawClient c;
  c.h.host.handler = ret_or_hold;
  c.ack_settings();
  c.send(raw_request(5, "/ret", true));
  EXPECT_EQ(c.ended(5), 1u);
  c.send(raw_request(3, "/ret", true));  // skipped by 5: RFC 9113 5.1.1
  EXPECT_EQ(c.goaway(), int64_t(NGHTTP2_PROTOCOL_ERROR));
  EXPECT_EQ(c.ended(3), 0u);
}

TEST(Http2Session, FramesInFlightAfterOurRefusalAreIgnored) {
  RawClient c("http2_max_concurrent_streams 1;");
  c.h.host.handler = ret_or_hold;
  c.ack_settings();
  c.send(raw_request(1, "/hold", false) + raw_request(3, "/hold", false) + raw_frame(NGHTTP2_DATA, 0, 3, "in flight"));
  EXPECT_EQ(c.reset(3), int64_t(NGHTTP2_REFUSED_STREAM));
  c.send(raw_frame(NGHTTP2_DATA, NGHTTP2_FLAG_END_STREAM, 3, "still in flight"));
  EXPECT_EQ(c.resets(NGHTTP2_STREAM_CLOSED), 0u);  // RFC 9113 5.1: ignored after our RST_STREAM
  EXPECT_EQ(c.goaway(), -1);
  EXPECT_FALSE(c.server_closed);
}

TEST(Http2Session, PriorityOnStreamZeroOrOnItself) {
  const std::string on_itself = be32(1) + std::string(1, '\x10');
  for (int32_t id : {0, 1}) {
    RawClient c;
    c.ack_settings();
    c.send(raw_frame(NGHTTP2_PRIORITY, 0, id, id == 0 ? be32(1) + "\x10" : on_itself));
    EXPECT_EQ(c.goaway(), int64_t(NGHTTP2_PROTOCOL_ERROR)) << id;  // RFC 9113 6.3, 5.3.1
  }
}

TEST(Http2Session, BurstBeforeSettingsIsRefusedNotCut) {
  // 400 streams with the preface, before the client has our SETTINGS
  // (RFC 9113 5.1.2): the 128 we take are answered, the rest refused,
  // and the refusals are not the client's resets.
  RawClient c;
  c.h.host.handler = [&](http::Exchange& ex) { respond(ex, "x"); };
  std::string burst;
  for (int i = 0; i < 400; ++i) burst += raw_request(1 + 2 * i, "/ret", true);
  c.send(burst);
  EXPECT_EQ(c.goaway(), -1);
  EXPECT_FALSE(c.server_closed);
  EXPECT_EQ(c.resets(NGHTTP2_REFUSED_STREAM), 400u - 128u);
  size_t answered = 0;
  for (int i = 0; i < 400; ++i) answered += c.ended(1 + 2 * i);
  EXPECT_EQ(answered, 128u);
  c.ack_settings();
  c.send(raw_request(801, "/ret", true));
  EXPECT_EQ(c.ended(801), 1u);
}

TEST(Http2Session, FrameScannerFindsHeadersAcrossPieces) {
  const std::string wire = std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + raw_frame(NGHTTP2_SETTINGS, 0, 0) +
                           raw_request(1, "/a", false) + raw_frame(NGHTTP2_DATA, 1, 1, "body") +
                           raw_frame(NGHTTP2_PRIORITY, 0, 0x7fffffff, be32(0) + "x");
  for (size_t piece = 1; piece <= wire.size(); ++piece) {
    FrameScanner scanner;
    std::vector<std::pair<uint8_t, int32_t>> found;
    for (size_t at = 0; at < wire.size(); at += piece) {
      const size_t n = std::min(piece, wire.size() - at);
      for (size_t pos = 0; pos < n;) {
        size_t used = 0;
        FrameHeader h;
        const bool got = scanner.next(wire.data() + at + pos, n - pos, used, h);
        pos += used;
        if (got) found.emplace_back(h.type, h.stream_id);
      }
    }
    const std::vector<std::pair<uint8_t, int32_t>> want = {
        {NGHTTP2_SETTINGS, 0}, {NGHTTP2_HEADERS, 1}, {NGHTTP2_DATA, 1}, {NGHTTP2_PRIORITY, 0x7fffffff}};
    ASSERT_EQ(found, want) << "pieces of " << piece;
  }
}

TEST(Http2Session, StreamLedgerRemembersHowStreamsClosed) {
  StreamLedger l;
  using S = StreamLedger::State;
  l.opened(1);
  l.opened(7);  // 3 and 5 skipped
  EXPECT_EQ(l.state(3), S::skipped);
  EXPECT_EQ(l.state(7), S::open);
  EXPECT_EQ(l.state(9), S::unknown);  // not seen yet
  l.client_ended(1);
  l.closed(1);
  EXPECT_EQ(l.state(1), S::closed_after_end);
  l.client_reset(7);
  l.closed(7);
  EXPECT_EQ(l.state(7), S::reset_by_client);
  l.opened(9);
  l.closed(9);
  EXPECT_EQ(l.state(9), S::reset_by_us);
  // A jump far ahead: the window holds only the last 256 identifiers.
  l.opened(100001);
  EXPECT_EQ(l.state(1), S::unknown);
  EXPECT_EQ(l.state(99999), S::skipped);
  EXPECT_EQ(l.state(100001 - 2 * 255), S::skipped);
  EXPECT_EQ(l.state(100001 - 2 * 256), S::unknown);
}

}  // namespace
}  // namespace torii::http2
