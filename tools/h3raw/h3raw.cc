// h3raw: a QUIC client for tests that writes whatever bytes a script gives
// it on the streams it names, so HTTP/3 framing a well-behaved client
// never sends (a second control stream, DATA before HEADERS, a field
// section too big, a reset flood) can be put before the server. ngtcp2
// and GnuTLS do QUIC and its handshake; there is no HTTP/3 library on
// the sending side. Responses are read back: the server's HEADERS are
// QPACK-decoded (nghttp3's decoder, no dynamic table) and printed.
//
//   h3raw HOST PORT SNI < script
//
// Script lines, run in order once the handshake is done:
//   uni HEX               open a unidirectional stream, send HEX   -> "uni ID"
//   bidi HEX [fin]        open a request stream, send HEX          -> "bidi ID"
//   send ID HEX [fin]     more bytes on stream ID
//   reset ID CODE         RESET_STREAM and STOP_SENDING with CODE
//   flood N HEX CODE      N request streams, each HEX then reset with CODE
//   keepalive MS          PING whenever the connection is idle MS
//   keyupdate             start a key update
//   stall                 stop giving response bytes back to the window
//                         (a client that stopped reading)
//   until MS PREFIX       run until an output line starts with PREFIX
//                         (printed so far or later); "timeout PREFIX" if not
//   sleep MS              run for MS
// Output lines: handshake | header ID NAME: VALUE | fin ID BODYLEN BODYHEX |
//   reset ID CODE | stop_sending ID CODE | goaway ID | settings K=V... |
//   max_streams_bidi N | close app|transport CODE REASON | idle_close |
//   stateless_reset | blocked (no stream credit) | flood_done N | end
#include <arpa/inet.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <netdb.h>
#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string from_hex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(char(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}

std::string to_hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

// QUIC variable-length integer (RFC 9000 16); false if `s` is too short.
bool read_varint(const std::string& s, size_t& pos, uint64_t& v) {
  if (pos >= s.size()) return false;
  const size_t len = size_t(1) << (uint8_t(s[pos]) >> 6);
  if (pos + len > s.size()) return false;
  v = uint8_t(s[pos]) & 0x3f;
  for (size_t i = 1; i < len; ++i) v = (v << 8) | uint8_t(s[pos + i]);
  pos += len;
  return true;
}

// ngtcp2 does not copy stream data: bytes handed to it must stay where they
// are until acknowledged, even after the stream is reset (a lost packet is
// sent again from them). So a stream's bytes are pieces kept in
// Client::kept, which only grows, and never a string that is appended to.
struct OutStream {
  std::vector<const std::string*> pieces;
  size_t size = 0;  // bytes in all pieces
  size_t sent = 0;
  bool fin = false;
  bool fin_sent = false;
};

struct InStream {
  std::string buf;  // frames not yet parsed
  std::string body;
  bool typed = false;  // a server unidirectional stream's type was read
  uint64_t type = 0;
  nghttp3_qpack_stream_context* qpack = nullptr;
};

class Client {
 public:
  std::vector<std::string> lines;
  ngtcp2_conn* conn = nullptr;
  gnutls_session_t tls = nullptr;
  nghttp3_qpack_decoder* decoder = nullptr;
  int fd = -1;
  bool handshake_done = false;
  bool over = false;  // closed, drained or timed out
  bool stalled = false;  // response bytes no longer open the window (`stall`)
  std::map<int64_t, OutStream> out;
  std::deque<std::string> kept;  // every byte queued on a stream, for the connection's life
  std::map<int64_t, InStream> in;
  ngtcp2_path_storage path{};
  ngtcp2_crypto_conn_ref ref{};

  void say(const std::string& line) {
    lines.push_back(line);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

  void queue(int64_t id, std::string bytes) {
    kept.push_back(std::move(bytes));
    queue_kept(id, kept.back());
  }

  void queue_kept(int64_t id, const std::string& kept_bytes) {
    OutStream& s = out[id];
    s.pieces.push_back(&kept_bytes);
    s.size += kept_bytes.size();
  }

  // The unsent bytes of the piece that holds offset `s.sent`.
  static ngtcp2_vec unsent(const OutStream& s) {
    size_t start = 0;
    for (const std::string* piece : s.pieces) {
      if (s.sent < start + piece->size())
        return {reinterpret_cast<uint8_t*>(const_cast<char*>(piece->data() + (s.sent - start))),
                piece->size() - (s.sent - start)};
      start += piece->size();
    }
    return {};
  }

  bool seen(const std::string& prefix) const {
    for (const auto& l : lines)
      if (l.compare(0, prefix.size(), prefix) == 0) return true;
    return false;
  }

  void parse_request_stream(int64_t id, InStream& s, bool fin) {
    for (;;) {
      size_t pos = 0;
      uint64_t type = 0, len = 0;
      if (!read_varint(s.buf, pos, type) || !read_varint(s.buf, pos, len) || pos + len > s.buf.size()) break;
      const std::string payload = s.buf.substr(pos, len);
      s.buf.erase(0, pos + len);
      if (type == 0x00) {
        s.body += payload;
      } else if (type == 0x01) {
        decode_headers(id, s, payload);
      }
    }
    if (fin) say("fin " + std::to_string(id) + " " + std::to_string(s.body.size()) + " " + to_hex(s.body.substr(0, 256)));
  }

  void decode_headers(int64_t id, InStream& s, const std::string& block) {
    if (!s.qpack) nghttp3_qpack_stream_context_new(&s.qpack, id, nghttp3_mem_default());
    nghttp3_qpack_stream_context_reset(s.qpack);
    const auto* p = reinterpret_cast<const uint8_t*>(block.data());
    size_t left = block.size();
    for (;;) {
      nghttp3_qpack_nv nv;
      uint8_t flags = 0;
      const nghttp3_ssize n = nghttp3_qpack_decoder_read_request(decoder, s.qpack, &nv, &flags, p, left, 1);
      if (n < 0) {
        say("qpack_error " + std::to_string(id));
        return;
      }
      p += n;
      left -= size_t(n);
      if (flags & NGHTTP3_QPACK_DECODE_FLAG_EMIT) {
        const nghttp3_vec name = nghttp3_rcbuf_get_buf(nv.name), value = nghttp3_rcbuf_get_buf(nv.value);
        say("header " + std::to_string(id) + " " + std::string(reinterpret_cast<const char*>(name.base), name.len) +
            ": " + std::string(reinterpret_cast<const char*>(value.base), value.len));
        nghttp3_rcbuf_decref(nv.name);
        nghttp3_rcbuf_decref(nv.value);
      }
      if (flags & NGHTTP3_QPACK_DECODE_FLAG_FINAL) return;
      if (n == 0 && !(flags & NGHTTP3_QPACK_DECODE_FLAG_EMIT)) return;
    }
  }

  void parse_uni_stream(InStream& s) {
    size_t pos = 0;
    if (!s.typed) {
      if (!read_varint(s.buf, pos, s.type)) return;
      s.typed = true;
      s.buf.erase(0, pos);
    }
    if (s.type != 0x00) {  // QPACK streams: nothing to read with no dynamic table
      s.buf.clear();
      return;
    }
    for (;;) {
      pos = 0;
      uint64_t type = 0, len = 0;
      if (!read_varint(s.buf, pos, type) || !read_varint(s.buf, pos, len) || pos + len > s.buf.size()) return;
      const std::string payload = s.buf.substr(pos, len);
      s.buf.erase(0, pos + len);
      size_t p = 0;
      if (type == 0x07) {
        uint64_t goaway = 0;
        read_varint(payload, p, goaway);
        say("goaway " + std::to_string(goaway));
      } else if (type == 0x04) {
        std::string line = "settings";
        uint64_t k = 0, v = 0;
        while (read_varint(payload, p, k) && read_varint(payload, p, v))
          line += " " + std::to_string(k) + "=" + std::to_string(v);
        say(line);
      }
    }
  }

  // ---- ngtcp2 callbacks ----------------------------------------------------------
  static Client& of(void* user) { return *static_cast<Client*>(user); }

  static int on_handshake(ngtcp2_conn*, void* user) {
    of(user).handshake_done = true;
    of(user).say("handshake");
    return 0;
  }

  static int on_stream_data(ngtcp2_conn* c, uint32_t flags, int64_t id, uint64_t, const uint8_t* data, size_t len,
                            void* user, void*) {
    Client& cl = of(user);
    InStream& s = cl.in[id];
    s.buf.append(reinterpret_cast<const char*>(data), len);
    const bool fin = (flags & NGTCP2_STREAM_DATA_FLAG_FIN) != 0;
    if (ngtcp2_is_bidi_stream(id)) {
      cl.parse_request_stream(id, s, fin);
    } else {
      cl.parse_uni_stream(s);
    }
    if (cl.stalled && ngtcp2_is_bidi_stream(id)) return 0;  // a reader that stopped reading
    ngtcp2_conn_extend_max_stream_offset(c, id, len);
    ngtcp2_conn_extend_max_offset(c, len);
    return 0;
  }

  static int on_stream_reset(ngtcp2_conn*, int64_t id, uint64_t, uint64_t code, void* user, void*) {
    of(user).say("reset " + std::to_string(id) + " " + hex_code(code));
    return 0;
  }

  static int on_stop_sending(ngtcp2_conn*, int64_t id, uint64_t code, void* user, void*) {
    of(user).say("stop_sending " + std::to_string(id) + " " + hex_code(code));
    return 0;
  }

  static int on_max_streams(ngtcp2_conn*, uint64_t n, void* user) {
    of(user).say("max_streams_bidi " + std::to_string(n));
    return 0;
  }

  static int on_stateless_reset(ngtcp2_conn*, const ngtcp2_pkt_stateless_reset*, void* user) {
    of(user).say("stateless_reset");
    return 0;
  }

  static void rand(uint8_t* dest, size_t len, const ngtcp2_rand_ctx*) {
    if (gnutls_rnd(GNUTLS_RND_NONCE, dest, len) != 0) std::memset(dest, 0, len);
  }

  static int new_cid(ngtcp2_conn*, ngtcp2_cid* cid, uint8_t* token, size_t cidlen, void*) {
    if (gnutls_rnd(GNUTLS_RND_RANDOM, cid->data, cidlen) != 0) return NGTCP2_ERR_CALLBACK_FAILURE;
    cid->datalen = cidlen;
    if (gnutls_rnd(GNUTLS_RND_RANDOM, token, NGTCP2_STATELESS_RESET_TOKENLEN) != 0) return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
  }

  static std::string hex_code(uint64_t code) {
    char b[32];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(code));
    return b;
  }

  static ngtcp2_conn* get_conn(ngtcp2_crypto_conn_ref* r) { return static_cast<Client*>(r->user_data)->conn; }

  bool start(const char* host, const char* port, const char* sni) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo* res = nullptr;
    if (getaddrinfo(host, port, &hints, &res) != 0) return false;
    fd = socket(res->ai_family, SOCK_DGRAM, 0);
    if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) != 0) return false;
    sockaddr_storage local{};
    socklen_t local_len = sizeof local;
    getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len);
    ngtcp2_path_storage_init(&path, reinterpret_cast<sockaddr*>(&local), local_len, res->ai_addr, res->ai_addrlen,
                             nullptr);
    freeaddrinfo(res);

    ngtcp2_callbacks cb{};
    cb.client_initial = ngtcp2_crypto_client_initial_cb;
    cb.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
    cb.handshake_completed = &on_handshake;
    cb.encrypt = ngtcp2_crypto_encrypt_cb;
    cb.decrypt = ngtcp2_crypto_decrypt_cb;
    cb.hp_mask = ngtcp2_crypto_hp_mask_cb;
    cb.recv_stream_data = &on_stream_data;
    cb.recv_retry = ngtcp2_crypto_recv_retry_cb;
    cb.rand = &rand;
    cb.get_new_connection_id = &new_cid;
    cb.update_key = ngtcp2_crypto_update_key_cb;
    cb.stream_reset = &on_stream_reset;
    cb.stream_stop_sending = &on_stop_sending;
    cb.extend_max_local_streams_bidi = &on_max_streams;
    cb.recv_stateless_reset = &on_stateless_reset;
    cb.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
    cb.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
    cb.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
    cb.version_negotiation = ngtcp2_crypto_version_negotiation_cb;

    ngtcp2_cid dcid, scid;
    dcid.datalen = scid.datalen = 18;
    gnutls_rnd(GNUTLS_RND_RANDOM, dcid.data, dcid.datalen);
    gnutls_rnd(GNUTLS_RND_RANDOM, scid.data, scid.datalen);
    ngtcp2_settings settings;
    ngtcp2_settings_default(&settings);
    settings.initial_ts = uint64_t(now_ns());
    ngtcp2_transport_params params;
    ngtcp2_transport_params_default(&params);
    // Small windows, so `stall` stops a response soon.
  params.initial_max_stream_data_bidi_local = 64 * 1024;
    params.initial_max_stream_data_uni = 1024 * 1024;
    params.initial_max_data = 64 * 1024 * 1024;
    params.initial_max_streams_uni = 3;
    params.max_idle_timeout = 60 * uint64_t(NGTCP2_SECONDS);
    params.active_connection_id_limit = 2;
    if (ngtcp2_conn_client_new(&conn, &dcid, &scid, &path.path, NGTCP2_PROTO_VER_V1, &cb, &settings, &params, nullptr,
                               this) != 0)
      return false;
    gnutls_certificate_credentials_t cred = nullptr;
    gnutls_certificate_allocate_credentials(&cred);  // no trust store: any certificate
    if (gnutls_init(&tls, GNUTLS_CLIENT) != 0) return false;
    if (gnutls_priority_set_direct(tls,
                                   "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:"
                                   "+CHACHA20-POLY1305:%DISABLE_TLS13_COMPAT_MODE",
                                   nullptr) != 0 ||
        ngtcp2_crypto_gnutls_configure_client_session(tls) != 0 ||
        gnutls_credentials_set(tls, GNUTLS_CRD_CERTIFICATE, cred) != 0)
      return false;
    ref.get_conn = &get_conn;
    ref.user_data = this;
    gnutls_session_set_ptr(tls, &ref);
    static const char kH3[] = "h3";
    gnutls_datum_t alpn{reinterpret_cast<unsigned char*>(const_cast<char*>(kH3)), 2};
    gnutls_alpn_set_protocols(tls, &alpn, 1, GNUTLS_ALPN_MANDATORY);
    gnutls_server_name_set(tls, GNUTLS_NAME_DNS, sni, std::strlen(sni));
    ngtcp2_conn_set_tls_native_handle(conn, tls);
    return nghttp3_qpack_decoder_new(&decoder, 0, 0, nghttp3_mem_default()) == 0;
  }

  void connection_over() {
    if (over) return;
    over = true;
    ngtcp2_connection_close_error e;
    ngtcp2_conn_get_connection_close_error(conn, &e);
    const bool app = e.type == NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION;
    say(std::string("close ") + (app ? "app " : "transport ") + hex_code(e.error_code) + " " +
        std::string(reinterpret_cast<const char*>(e.reason), e.reasonlen));
  }

  void send_packets() {
    if (over) return;
    uint8_t buf[1500];
    std::vector<int64_t> blocked;  // flow control holds these until MAX_STREAM_DATA
    for (int guard = 0; guard < 1000; ++guard) {
      int64_t id = -1;
      ngtcp2_vec vec{};
      uint32_t flags = 0;
      OutStream* os = nullptr;
      for (auto& [sid, s] : out) {
        if (std::find(blocked.begin(), blocked.end(), sid) != blocked.end()) continue;
        if (s.sent < s.size || (s.fin && !s.fin_sent)) {
          id = sid;
          os = &s;
          vec = unsent(s);
          if (s.fin && s.sent + vec.len == s.size) flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
          break;
        }
      }
      ngtcp2_ssize accepted = -1;
      ngtcp2_pkt_info pi;
      const ngtcp2_ssize n = ngtcp2_conn_writev_stream(conn, &path.path, &pi, buf, sizeof buf, &accepted, flags, id,
                                                       vec.len ? &vec : nullptr, vec.len ? 1 : 0, uint64_t(now_ns()));
      if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED) {
        blocked.push_back(id);
        continue;
      }
      if (n == NGTCP2_ERR_STREAM_SHUT_WR || n == NGTCP2_ERR_STREAM_NOT_FOUND) {
        if (os) os->fin_sent = true, os->sent = os->size;  // the server reset it: nothing more to send
        continue;
      }
      if (n < 0) {
        say("write_error " + std::string(ngtcp2_strerror(int(n))));
        over = true;
        return;
      }
      if (os && accepted >= 0) {
        os->sent += size_t(accepted);
        if (os->sent == os->size && os->fin) os->fin_sent = true;
      }
      if (n == 0) return;
      send(fd, buf, size_t(n), 0);
    }
  }

  void read_packets() {
    uint8_t buf[65536];
    for (;;) {
      const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n <= 0) return;
      if (over) continue;
      ngtcp2_pkt_info pi{};
      const int rv = ngtcp2_conn_read_pkt(conn, &path.path, &pi, buf, size_t(n), uint64_t(now_ns()));
      if (rv == NGTCP2_ERR_DRAINING || rv == NGTCP2_ERR_CLOSING) {
        connection_over();
      } else if (rv != 0) {
        say("read_error " + std::string(ngtcp2_strerror(rv)));
        over = true;
      }
    }
  }

  // Runs the connection until `deadline_ns` or until `done` says so.
  template <typename Done>
  void run(int64_t deadline_ns, Done done) {
    for (;;) {
      send_packets();
      if (done() || over) return;
      const int64_t now = now_ns();
      if (now >= deadline_ns) return;
      int64_t wait = deadline_ns - now;
      const int64_t expiry = int64_t(ngtcp2_conn_get_expiry(conn));
      if (expiry >= 0 && expiry != INT64_MAX) wait = std::min(wait, std::max<int64_t>(expiry - now, 0));
      pollfd p{fd, POLLIN, 0};
      poll(&p, 1, int((wait + 999'999) / 1'000'000));
      if (p.revents & POLLIN) read_packets();
      if (!over && int64_t(ngtcp2_conn_get_expiry(conn)) <= now_ns()) {
        const int rv = ngtcp2_conn_handle_expiry(conn, uint64_t(now_ns()));
        if (rv == NGTCP2_ERR_IDLE_CLOSE) {
          say("idle_close");
          over = true;
        } else if (rv != 0) {
          say("expiry_error " + std::string(ngtcp2_strerror(rv)));
          over = true;
        }
      }
    }
  }

  void close() {
    if (over) return;
    uint8_t buf[1500];
    ngtcp2_connection_close_error e;
    ngtcp2_connection_close_error_set_application_error(&e, 0x100, nullptr, 0);
    ngtcp2_pkt_info pi;
    const ngtcp2_ssize n =
        ngtcp2_conn_write_connection_close(conn, &path.path, &pi, buf, sizeof buf, &e, uint64_t(now_ns()));
    if (n > 0) send(fd, buf, size_t(n), 0);
  }
};

int64_t ms(const std::string& v) { return std::stoll(v) * 1'000'000; }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: h3raw HOST PORT SNI < script\n");
    return 2;
  }
  Client c;
  if (!c.start(argv[1], argv[2], argv[3])) {
    std::fprintf(stderr, "h3raw: cannot start\n");
    return 1;
  }
  c.run(now_ns() + 10'000'000'000, [&] { return c.handshake_done; });
  if (!c.handshake_done) {
    c.say("handshake_failed");
    return 1;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    std::string cmd, a, b, d;
    words >> cmd >> a >> b >> d;
    if (cmd.empty()) continue;
    if (cmd == "uni" || cmd == "bidi") {
      int64_t id = -1;
      const int rv = cmd == "uni" ? ngtcp2_conn_open_uni_stream(c.conn, &id, nullptr)
                                  : ngtcp2_conn_open_bidi_stream(c.conn, &id, nullptr);
      if (rv != 0) {
        c.say("blocked");
        continue;
      }
      c.queue(id, from_hex(a));
      c.out[id].fin = b == "fin";
      c.say(cmd + " " + std::to_string(id));
    } else if (cmd == "send") {
      const int64_t id = std::stoll(a);
      c.queue(id, from_hex(b));
      c.out[id].fin = d == "fin";
    } else if (cmd == "reset") {
      const int64_t id = std::stoll(a);
      ngtcp2_conn_shutdown_stream(c.conn, id, std::stoull(b, nullptr, 0));
      c.out.erase(id);
    } else if (cmd == "keepalive") {
      ngtcp2_conn_set_keep_alive_timeout(c.conn, uint64_t(ms(a)));
    } else if (cmd == "flood") {
      // N request streams, each sent then reset at once, waiting for
      // stream credit as it comes back (rapid reset).
      const long n = std::stol(a);
      c.kept.push_back(from_hex(b));
      const std::string& bytes = c.kept.back();  // one copy for every stream
      long opened = 0;
      const int64_t give_up = now_ns() + 20'000'000'000;
      while (opened < n && !c.over && now_ns() < give_up) {
        int64_t id = -1;
        if (ngtcp2_conn_open_bidi_stream(c.conn, &id, nullptr) != 0) {
          c.run(now_ns() + 5'000'000, [] { return false; });
          continue;
        }
        c.queue_kept(id, bytes);
        c.send_packets();
        ngtcp2_conn_shutdown_stream(c.conn, id, std::stoull(d, nullptr, 0));
        c.out.erase(id);
        ++opened;
      }
      c.say("flood_done " + std::to_string(opened));
    } else if (cmd == "stall") {
      c.stalled = true;
    } else if (cmd == "keyupdate") {
      if (ngtcp2_conn_initiate_key_update(c.conn, uint64_t(now_ns())) != 0) c.say("keyupdate_failed");
    } else if (cmd == "until") {
      // The rest of the line after MS, spaces kept.
      const size_t at = line.find(b, line.find(a, cmd.size()) + a.size());
      const std::string prefix = line.substr(at);
      c.run(now_ns() + ms(a), [&] { return c.seen(prefix); });
      if (!c.seen(prefix)) c.say("timeout " + prefix);
    } else if (cmd == "sleep") {
      c.run(now_ns() + ms(a), [] { return false; });
    } else {
      c.say("bad_command " + cmd);
    }
    c.send_packets();
  }
  c.run(now_ns() + 50'000'000, [] { return false; });
  c.close();
  c.say("end");
  return 0;
}
