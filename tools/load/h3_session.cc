#include "load/h3_session.h"

#include <gnutls/crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "load/quic_tls.h"

namespace torii::load {

namespace {

// Large windows, so flow control never paces the responses (as the HTTP/2
// mode does): bodies are dropped as they arrive and their credit given back.
constexpr uint64_t kStreamWindow = 64 * 1024 * 1024;
constexpr uint64_t kConnectionWindow = 256 * 1024 * 1024;
// A server that goes silent this long has gone (RFC 9000 10.1); --timeout
// usually ends such a connection sooner.
constexpr uint64_t kIdleTimeout = 30 * uint64_t(NGTCP2_SECONDS);
constexpr size_t kCidLength = 18;

H3Session* of(void* user) { return static_cast<H3Session*>(user); }

ngtcp2_conn* get_conn(ngtcp2_crypto_conn_ref* ref) { return static_cast<ngtcp2_conn*>(ref->user_data); }

bool random_bytes(uint8_t* dest, size_t len) { return gnutls_rnd(GNUTLS_RND_RANDOM, dest, len) == 0; }

// "H3_REQUEST_REJECTED" and the like, for the error summary.
const char* h3_error_name(uint64_t code) {
  switch (code) {
    case 0x100: return "H3_NO_ERROR";
    case 0x101: return "H3_GENERAL_PROTOCOL_ERROR";
    case 0x102: return "H3_INTERNAL_ERROR";
    case 0x103: return "H3_STREAM_CREATION_ERROR";
    case 0x104: return "H3_CLOSED_CRITICAL_STREAM";
    case 0x105: return "H3_FRAME_UNEXPECTED";
    case 0x106: return "H3_FRAME_ERROR";
    case 0x107: return "H3_EXCESSIVE_LOAD";
    case 0x108: return "H3_ID_ERROR";
    case 0x109: return "H3_SETTINGS_ERROR";
    case 0x10a: return "H3_MISSING_SETTINGS";
    case 0x10b: return "H3_REQUEST_REJECTED";
    case 0x10c: return "H3_REQUEST_CANCELLED";
    case 0x10d: return "H3_REQUEST_INCOMPLETE";
    case 0x10e: return "H3_MESSAGE_ERROR";
    case 0x10f: return "H3_CONNECT_ERROR";
    case 0x110: return "H3_VERSION_FALLBACK";
    default: return "error";
  }
}

}  // namespace

// The libraries' C callbacks, with access to the session's insides.
class H3Session::Callbacks {
 public:
  // ---- ngtcp2 ------------------------------------------------------------------
  static int handshake_completed(ngtcp2_conn*, void* user) {
    of(user)->handshake_done_ = true;
    return 0;
  }

  static int recv_rx_key(ngtcp2_conn*, ngtcp2_crypto_level level, void* user) {
    if (level != NGTCP2_CRYPTO_LEVEL_APPLICATION) return 0;
    H3Session& s = *of(user);
    if (s.hq_) {
      s.hq_ready_ = true;  // hq-interop: no control or QPACK streams to open
      return 0;
    }
    return s.setup_http3() ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
  }

  static int recv_stream_data(ngtcp2_conn* conn, uint32_t flags, int64_t stream_id, uint64_t, const uint8_t* data,
                              size_t len, void* user, void* stream_user) {
    H3Session& s = *of(user);
    s.bytes_received_ += len;
    if (s.hq_) {
      // hq-interop: the stream's bytes are the response body, its FIN the end.
      s.consume(stream_id, len);
      auto* slot = static_cast<Slot*>(stream_user);
      if (!slot) return 0;
      if (!s.save_dir_.empty()) slot->body.append(reinterpret_cast<const char*>(data), len);
      if (flags & NGTCP2_STREAM_DATA_FLAG_FIN) s.stream_done(stream_id, *slot);
      return 0;
    }
    if (!s.h3_) return 0;
    const nghttp3_ssize n =
        nghttp3_conn_read_stream(s.h3_, stream_id, data, len, (flags & NGTCP2_STREAM_DATA_FLAG_FIN) != 0);
    if (n < 0) {
      std::snprintf(s.error_, sizeof s.error_, "invalid HTTP/3 from the server: %s", nghttp3_strerror(int(n)));
      return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    // Framing and headers are acknowledged here; body bytes in recv_data.
    ngtcp2_conn_extend_max_stream_offset(conn, stream_id, uint64_t(n));
    ngtcp2_conn_extend_max_offset(conn, uint64_t(n));
    return 0;
  }

  static int acked_stream_data_offset(ngtcp2_conn*, int64_t stream_id, uint64_t, uint64_t len, void* user, void*) {
    H3Session& s = *of(user);
    if (s.h3_ && nghttp3_conn_add_ack_offset(s.h3_, stream_id, len) != 0) return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
  }

  static int stream_close(ngtcp2_conn*, uint32_t flags, int64_t stream_id, uint64_t app_error, void* user,
                          void* stream_user) {
    H3Session& s = *of(user);
    if (!(flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET)) app_error = NGHTTP3_H3_NO_ERROR;
    if (s.hq_) {
      // Closed before the response's FIN (a reset): the request failed.
      if (auto* slot = static_cast<Slot*>(stream_user)) s.stream_closed(stream_id, app_error, *slot);
      return 0;
    }
    if (!s.h3_) return 0;
    const int rv = nghttp3_conn_close_stream(s.h3_, stream_id, app_error);
    if (rv != 0 && rv != NGHTTP3_ERR_STREAM_NOT_FOUND) return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
  }

  // The server reset its response, or asked us to stop sending the request.
  static int stream_reset(ngtcp2_conn*, int64_t stream_id, uint64_t, uint64_t, void* user, void*) {
    H3Session& s = *of(user);
    if (s.h3_ && nghttp3_conn_shutdown_stream_read(s.h3_, stream_id) != 0) return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
  }
  static int stream_stop_sending(ngtcp2_conn*, int64_t stream_id, uint64_t, void* user, void*) {
    H3Session& s = *of(user);
    if (s.h3_ && nghttp3_conn_shutdown_stream_read(s.h3_, stream_id) != 0) return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
  }

  static int extend_max_stream_data(ngtcp2_conn*, int64_t stream_id, uint64_t, void* user, void*) {
    H3Session& s = *of(user);
    if (s.hq_) {
      if (Slot* slot = s.slot_of(stream_id)) slot->blocked = false;
      return 0;
    }
    if (s.h3_ && nghttp3_conn_unblock_stream(s.h3_, stream_id) != 0) return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
  }

  static void rand(uint8_t* dest, size_t len, const ngtcp2_rand_ctx*) {
    // Not for keys: packet-number and padding randomness ngtcp2 asks for.
    if (gnutls_rnd(GNUTLS_RND_NONCE, dest, len) != 0) std::memset(dest, 0, len);
  }

  static int get_new_connection_id(ngtcp2_conn*, ngtcp2_cid* cid, uint8_t* token, size_t cidlen, void*) {
    if (!random_bytes(cid->data, cidlen) || !random_bytes(token, NGTCP2_STATELESS_RESET_TOKENLEN))
      return NGTCP2_ERR_CALLBACK_FAILURE;
    cid->datalen = cidlen;
    return 0;
  }

  // ---- nghttp3 -----------------------------------------------------------------
  static int h3_recv_header(nghttp3_conn*, int64_t, int32_t token, nghttp3_rcbuf*, nghttp3_rcbuf* value, uint8_t,
                            void*, void* stream_user) {
    auto* slot = static_cast<Slot*>(stream_user);
    if (!slot || token != NGHTTP3_QPACK_TOKEN__STATUS) return 0;
    const nghttp3_vec v = nghttp3_rcbuf_get_buf(value);
    int status = 0;
    if (v.len != 3) return 0;
    for (size_t i = 0; i < 3; ++i) {
      if (v.base[i] < '0' || v.base[i] > '9') return 0;
      status = status * 10 + (v.base[i] - '0');
    }
    slot->status = status;  // a 1xx is followed by the final status
    return 0;
  }

  static int h3_recv_data(nghttp3_conn*, int64_t stream_id, const uint8_t* data, size_t len, void* user,
                          void* stream_user) {
    H3Session& s = *of(user);
    if (!s.save_dir_.empty())
      if (auto* slot = static_cast<Slot*>(stream_user)) slot->body.append(reinterpret_cast<const char*>(data), len);
    s.consume(stream_id, len);  // counted in recv_stream_data, dropped here
    return 0;
  }

  static int h3_deferred_consume(nghttp3_conn*, int64_t stream_id, size_t consumed, void* user, void*) {
    of(user)->consume(stream_id, consumed);
    return 0;
  }

  static int h3_end_stream(nghttp3_conn*, int64_t stream_id, void* user, void* stream_user) {
    if (auto* slot = static_cast<Slot*>(stream_user)) of(user)->stream_done(stream_id, *slot);
    return 0;
  }

  static int h3_stream_close(nghttp3_conn*, int64_t stream_id, uint64_t app_error, void* user, void* stream_user) {
    if (auto* slot = static_cast<Slot*>(stream_user)) of(user)->stream_closed(stream_id, app_error, *slot);
    return 0;
  }

  static int h3_stop_sending(nghttp3_conn*, int64_t stream_id, uint64_t app_error, void* user, void*) {
    if (ngtcp2_conn_shutdown_stream_read(of(user)->conn_, stream_id, app_error) != 0)
      return NGHTTP3_ERR_CALLBACK_FAILURE;
    return 0;
  }

  static int h3_reset_stream(nghttp3_conn*, int64_t stream_id, uint64_t app_error, void* user, void*) {
    if (ngtcp2_conn_shutdown_stream_write(of(user)->conn_, stream_id, app_error) != 0)
      return NGHTTP3_ERR_CALLBACK_FAILURE;
    return 0;
  }

  // GOAWAY: no new requests here; those in flight finish (or are rejected).
  static int h3_shutdown(nghttp3_conn*, int64_t id, void* user) {
    H3Session& s = *of(user);
    s.draining_ = true;
    s.goaway_id_ = std::min(s.goaway_id_, id);
    return 0;
  }

  // The request body, straight from the template (it outlives the stream).
  static nghttp3_ssize read_body(nghttp3_conn*, int64_t, nghttp3_vec* vec, size_t veccnt, uint32_t* flags,
                                 void* user, void*) {
    const std::string& body = of(user)->templates_.body;
    *flags |= NGHTTP3_DATA_FLAG_EOF;
    if (veccnt == 0 || body.empty()) return 0;
    vec[0].base = reinterpret_cast<uint8_t*>(const_cast<char*>(body.data()));
    vec[0].len = body.size();
    return 1;
  }
};

H3Session::H3Session(const RequestTemplates& templates, unsigned streams, bool one_request, bool hq,
                     const std::string& save_dir, RequestSink& sink)
    : templates_(templates),
      sink_(sink),
      streams_(streams ? streams : 1),
      one_request_(one_request),
      hq_(hq),
      save_dir_(save_dir),
      slots_(streams_) {
  free_.reserve(streams_);
}

H3Session::~H3Session() { end(); }

void H3Session::end() {
  // The libraries call no callbacks while freeing; slots are reported by closed().
  if (h3_) nghttp3_conn_del(h3_);
  if (conn_) ngtcp2_conn_del(conn_);
  if (tls_) gnutls_deinit(tls_);
  h3_ = nullptr;
  conn_ = nullptr;
  tls_ = nullptr;
}

bool H3Session::fail(ErrorKind kind, const char* fmt, ...) {
  error_kind_ = kind;
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(error_, sizeof error_, fmt, ap);
  va_end(ap);
  failed_ = true;
  return false;
}

bool H3Session::start(const sockaddr* local, socklen_t local_len, const sockaddr* remote, socklen_t remote_len,
                      const char* server_name, gnutls_certificate_credentials_t credentials, int64_t now_ns) {
  end();
  free_.clear();
  for (uint32_t i = streams_; i-- > 0;) {
    slots_[i] = Slot{};
    free_.push_back(i);
  }
  active_ = 0;
  answered_ = bytes_received_ = bytes_sent_ = 0;
  submitted_ = handshake_done_ = draining_ = failed_ = clean_ = hq_ready_ = false;
  goaway_id_ = INT64_MAX;
  error_[0] = '\0';

  ngtcp2_callbacks cb{};
  cb.client_initial = ngtcp2_crypto_client_initial_cb;
  cb.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
  cb.handshake_completed = &Callbacks::handshake_completed;
  cb.encrypt = ngtcp2_crypto_encrypt_cb;
  cb.decrypt = ngtcp2_crypto_decrypt_cb;
  cb.hp_mask = ngtcp2_crypto_hp_mask_cb;
  cb.recv_stream_data = &Callbacks::recv_stream_data;
  cb.acked_stream_data_offset = &Callbacks::acked_stream_data_offset;
  cb.stream_close = &Callbacks::stream_close;
  cb.recv_retry = ngtcp2_crypto_recv_retry_cb;
  cb.rand = &Callbacks::rand;
  cb.get_new_connection_id = &Callbacks::get_new_connection_id;
  cb.update_key = ngtcp2_crypto_update_key_cb;
  cb.stream_reset = &Callbacks::stream_reset;
  cb.extend_max_stream_data = &Callbacks::extend_max_stream_data;
  cb.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
  cb.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
  cb.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
  cb.stream_stop_sending = &Callbacks::stream_stop_sending;
  cb.version_negotiation = ngtcp2_crypto_version_negotiation_cb;
  cb.recv_rx_key = &Callbacks::recv_rx_key;

  ngtcp2_cid dcid, scid;
  dcid.datalen = scid.datalen = kCidLength;
  if (!random_bytes(dcid.data, dcid.datalen) || !random_bytes(scid.data, scid.datalen))
    return fail(ErrorKind::tls, "no random bytes for connection IDs");

  ngtcp2_settings settings;
  ngtcp2_settings_default(&settings);
  settings.initial_ts = uint64_t(now_ns);
  settings.max_window = kConnectionWindow;
  settings.max_stream_window = kStreamWindow;

  ngtcp2_transport_params params;
  ngtcp2_transport_params_default(&params);
  params.initial_max_stream_data_bidi_local = kStreamWindow;  // responses on our requests
  params.initial_max_stream_data_uni = 1024 * 1024;           // control and QPACK streams
  params.initial_max_data = kConnectionWindow;
  params.initial_max_streams_bidi = 0;  // a server opens none
  params.initial_max_streams_uni = 3;   // control, QPACK encoder and decoder
  params.max_idle_timeout = kIdleTimeout;
  params.max_udp_payload_size = kMaxDatagram;
  params.active_connection_id_limit = 2;

  ngtcp2_path path{{const_cast<sockaddr*>(local), local_len}, {const_cast<sockaddr*>(remote), remote_len}, nullptr};
  ngtcp2_path_storage_zero(&path_);
  ngtcp2_path_copy(&path_.path, &path);
  if (ngtcp2_conn_client_new(&conn_, &dcid, &scid, &path_.path, NGTCP2_PROTO_VER_V1, &cb, &settings, &params, nullptr,
                             this) != 0) {
    conn_ = nullptr;
    return fail(ErrorKind::tls, "out of memory for a QUIC connection");
  }
  if (gnutls_init(&tls_, GNUTLS_CLIENT) != 0) {
    tls_ = nullptr;
    return fail(ErrorKind::tls, "gnutls_init failed");
  }
  if (gnutls_priority_set_direct(tls_, kQuicClientPriority, nullptr) != 0 ||
      ngtcp2_crypto_gnutls_configure_client_session(tls_) != 0 ||
      gnutls_credentials_set(tls_, GNUTLS_CRD_CERTIFICATE, credentials) != 0)
    return fail(ErrorKind::tls, "cannot configure the QUIC TLS session");
  conn_ref_.get_conn = &get_conn;
  conn_ref_.user_data = conn_;
  gnutls_session_set_ptr(tls_, &conn_ref_);
  // RFC 9114 3.1: "h3", or no connection ("hq-interop" with --hq).
  static const char kH3[] = "h3";
  static const char kHq[] = "hq-interop";
  gnutls_datum_t alpn = hq_ ? gnutls_datum_t{reinterpret_cast<unsigned char*>(const_cast<char*>(kHq)), 10}
                            : gnutls_datum_t{reinterpret_cast<unsigned char*>(const_cast<char*>(kH3)), 2};
  gnutls_alpn_set_protocols(tls_, &alpn, 1, GNUTLS_ALPN_MANDATORY);
  if (server_name && *server_name)
    gnutls_server_name_set(tls_, GNUTLS_NAME_DNS, server_name, std::strlen(server_name));
  ngtcp2_conn_set_tls_native_handle(conn_, tls_);
  return true;
}

bool H3Session::setup_http3() {
  if (h3_) return true;
  if (ngtcp2_conn_get_max_local_streams_uni(conn_) < 3) {
    std::snprintf(error_, sizeof error_, "the server allows fewer than 3 unidirectional streams");
    return false;  // RFC 9114 6.2: control + QPACK streams
  }
  nghttp3_callbacks cb{};
  cb.stream_close = &Callbacks::h3_stream_close;
  cb.recv_data = &Callbacks::h3_recv_data;
  cb.deferred_consume = &Callbacks::h3_deferred_consume;
  cb.recv_header = &Callbacks::h3_recv_header;
  cb.stop_sending = &Callbacks::h3_stop_sending;
  cb.end_stream = &Callbacks::h3_end_stream;
  cb.reset_stream = &Callbacks::h3_reset_stream;
  cb.shutdown = &Callbacks::h3_shutdown;
  nghttp3_settings settings;
  nghttp3_settings_default(&settings);
  if (nghttp3_conn_client_new(&h3_, &cb, &settings, nghttp3_mem_default(), this) != 0) {
    h3_ = nullptr;
    return false;
  }
  int64_t control = 0, enc = 0, dec = 0;
  return ngtcp2_conn_open_uni_stream(conn_, &control, nullptr) == 0 &&
         nghttp3_conn_bind_control_stream(h3_, control) == 0 &&
         ngtcp2_conn_open_uni_stream(conn_, &enc, nullptr) == 0 &&
         ngtcp2_conn_open_uni_stream(conn_, &dec, nullptr) == 0 && nghttp3_conn_bind_qpack_streams(h3_, enc, dec) == 0;
}

unsigned H3Session::capacity() const {
  if (!ready() || failed_ || draining_ || (one_request_ && submitted_)) return 0;
  const uint64_t credit = ngtcp2_conn_get_streams_bidi_left(conn_);
  return unsigned(std::min<uint64_t>(streams_ - active_, credit));
}

void H3Session::submit(int64_t from_ns, int64_t sent_ns) {
  uint32_t index = free_.back();
  free_.pop_back();
  Slot& slot = slots_[index];
  slot = Slot{};
  slot.from_ns = from_ns;
  slot.sent_ns = sent_ns;
  slot.used = true;
  ++active_;
  submitted_ = true;
  int64_t id = -1;
  // hq: QUIC's stream data callbacks find the slot (there is no nghttp3).
  int rv = ngtcp2_conn_open_bidi_stream(conn_, &id, hq_ ? &slot : nullptr);
  if (rv != 0) {
    release(slot);
    sink_.failed(from_ns, ErrorKind::protocol, ngtcp2_strerror(rv));
    return;
  }
  slot.stream_id = id;
  if (hq_) {
    slot.url = next_url_;  // its request line goes out with the next packets
    next_url_ = uint32_t((next_url_ + 1) % templates_.hq.size());
    return;
  }
  const auto& nv = templates_.h3[next_url_];
  next_url_ = uint32_t((next_url_ + 1) % templates_.h3.size());
  nghttp3_data_reader body{&Callbacks::read_body};
  rv = nghttp3_conn_submit_request(h3_, id, nv.data(), nv.size(), templates_.body.empty() ? nullptr : &body, &slot);
  if (rv != 0) {
    ngtcp2_conn_shutdown_stream(conn_, id, NGHTTP3_H3_INTERNAL_ERROR);
    release(slot);
    sink_.failed(from_ns, ErrorKind::protocol, nghttp3_strerror(rv));
  }
}

void H3Session::release(Slot& slot) {
  slot.used = false;
  free_.push_back(uint32_t(&slot - slots_.data()));
  --active_;
}

void H3Session::consume(int64_t stream_id, size_t n) {
  ngtcp2_conn_extend_max_stream_offset(conn_, stream_id, n);
  ngtcp2_conn_extend_max_offset(conn_, n);
}

// The response's last byte arrived: done, whatever QUIC still has to
// settle on the stream (acknowledgements), so the slot is free again.
void H3Session::stream_done(int64_t stream_id, Slot& slot) {
  if (hq_) {
    ngtcp2_conn_set_stream_user_data(conn_, stream_id, nullptr);
    slot.status = kNoStatus;
  } else {
    nghttp3_conn_set_stream_user_data(h3_, stream_id, nullptr);
  }
  const int64_t from = slot.from_ns;
  const int status = slot.status;
  if (!save_dir_.empty()) save_body(slot);
  release(slot);
  if (hq_) {
    ++answered_;
    sink_.completed(from, status);
    return;
  }
  if (status >= 200) {
    ++answered_;
    sink_.completed(from, status);
  } else {
    sink_.failed(from, ErrorKind::protocol, "stream ended without a final response");
  }
}

// The stream closed before its response was complete.
void H3Session::stream_closed(int64_t, uint64_t app_error, Slot& slot) {
  const int64_t from = slot.from_ns;
  release(slot);
  // hq-interop has no GOAWAY: a rejected stream is how the server says it
  // takes no more requests here, so this connection gets none (as after a
  // GOAWAY) and closes once the rest are answered.
  if (hq_ && app_error == NGHTTP3_H3_REQUEST_REJECTED) draining_ = true;
  if (app_error == NGHTTP3_H3_REQUEST_REJECTED && answered_ > 0) {
    // Not processed (RFC 9114 4.1.1): safe to send again. Only on a
    // connection that has answered before, so a server rejecting
    // everything fails requests instead of bouncing them forever.
    sink_.retry(from);
  } else if (app_error == NGHTTP3_H3_NO_ERROR) {
    sink_.failed(from, ErrorKind::protocol, "stream ended without a complete response");
  } else {
    std::snprintf(why_, sizeof why_, "stream reset: %s (0x%llx)", h3_error_name(app_error),
                  static_cast<unsigned long long>(app_error));
    sink_.failed(from, ErrorKind::reset, why_);
  }
}

bool H3Session::receive(const uint8_t* data, size_t len, int64_t now_ns) {
  if (!conn_ || failed_) return false;
  ngtcp2_pkt_info pi{};
  const int rv = ngtcp2_conn_read_pkt(conn_, &path_.path, &pi, data, len, uint64_t(now_ns));
  if (rv == 0) return true;
  return read_failed(rv);
}

bool H3Session::read_failed(int rv) {
  if (rv == NGTCP2_ERR_DRAINING) {
    // The server closed the connection (CONNECTION_CLOSE or a stateless reset).
    ngtcp2_connection_close_error ccerr;
    ngtcp2_conn_get_connection_close_error(conn_, &ccerr);
    const bool app = ccerr.type == NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION;
    const auto code = static_cast<unsigned long long>(ccerr.error_code);
    clean_ = handshake_done_ && ((app && ccerr.error_code == NGHTTP3_H3_NO_ERROR) ||
                                 (!app && ccerr.error_code == NGTCP2_NO_ERROR));
    if (!handshake_done_) {
      if (!app && code >= 0x100 && code < 0x200)
        return fail(ErrorKind::tls, "QUIC handshake failed: the server sent TLS alert %llu", code - 0x100);
      return fail(ErrorKind::tls, "QUIC handshake failed: the server closed the connection (0x%llx)", code);
    }
    if (app) return fail(ErrorKind::reset, "connection closed by the server: %s (0x%llx)", h3_error_name(code), code);
    return fail(ErrorKind::reset, "connection closed by the server (QUIC error 0x%llx)", code);
  }
  if (rv == NGTCP2_ERR_CRYPTO)
    return fail(ErrorKind::tls, "QUIC handshake failed: TLS alert %u", unsigned(ngtcp2_conn_get_tls_alert(conn_)));
  if (rv == NGTCP2_ERR_CALLBACK_FAILURE && error_[0]) return fail(ErrorKind::protocol, "%s", error_);
  if (!handshake_done_) return fail(ErrorKind::tls, "QUIC handshake failed: %s", ngtcp2_strerror(rv));
  return fail(ErrorKind::protocol, "QUIC: %s", ngtcp2_strerror(rv));
}

ssize_t H3Session::produce(uint8_t* buf, size_t cap, int64_t now_ns) {
  if (!conn_ || failed_) return -1;
  const size_t max_pkt = std::min(cap, max_packet_size());
  for (;;) {
    int64_t stream_id = -1;
    int fin = 0;
    nghttp3_vec vec[16];
    nghttp3_ssize count = 0;
    if (hq_) {
      count = nghttp3_ssize(hq_pending(stream_id, fin, reinterpret_cast<ngtcp2_vec*>(vec)));
    } else if (h3_ && ngtcp2_conn_get_max_data_left(conn_)) {
      count = nghttp3_conn_writev_stream(h3_, &stream_id, &fin, vec, 16);
      if (count < 0) {
        fail(ErrorKind::protocol, "HTTP/3: %s", nghttp3_strerror(int(count)));
        return -1;
      }
    }
    uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE;
    if (fin) flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
    ngtcp2_ssize accepted = -1;
    const ngtcp2_ssize n = ngtcp2_conn_writev_stream(conn_, nullptr, nullptr, buf, max_pkt, &accepted, flags,
                                                     stream_id, reinterpret_cast<const ngtcp2_vec*>(vec),
                                                     size_t(count), uint64_t(now_ns));
    if (n < 0) {
      switch (n) {
        case NGTCP2_ERR_STREAM_DATA_BLOCKED:
          if (hq_) {
            hq_blocked(stream_id);
          } else {
            nghttp3_conn_block_stream(h3_, stream_id);
          }
          continue;
        case NGTCP2_ERR_STREAM_SHUT_WR:
          if (hq_) {
            hq_blocked(stream_id);  // reset by the server: nothing more to send on it
          } else {
            nghttp3_conn_shutdown_stream_write(h3_, stream_id);
          }
          continue;
        case NGTCP2_ERR_WRITE_MORE:
          bytes_sent_ += uint64_t(accepted);
          if (hq_) {
            hq_written(stream_id, size_t(accepted));
          } else if (nghttp3_conn_add_write_offset(h3_, stream_id, size_t(accepted)) != 0) {
            fail(ErrorKind::protocol, "HTTP/3: cannot account written data");
            return -1;
          }
          continue;
        default:
          if (!handshake_done_) {
            fail(ErrorKind::tls, "QUIC handshake failed: %s", ngtcp2_strerror(int(n)));
          } else {
            fail(ErrorKind::protocol, "QUIC: %s", ngtcp2_strerror(int(n)));
          }
          return -1;
      }
    }
    if (accepted >= 0) {
      bytes_sent_ += uint64_t(accepted);
      if (hq_) {
        hq_written(stream_id, size_t(accepted));
      } else if (nghttp3_conn_add_write_offset(h3_, stream_id, size_t(accepted)) != 0) {
        fail(ErrorKind::protocol, "HTTP/3: cannot account written data");
        return -1;
      }
    }
    return n;
  }
}

H3Session::Slot* H3Session::slot_of(int64_t stream_id) {
  for (Slot& slot : slots_)
    if (slot.used && slot.stream_id == stream_id) return &slot;
  return nullptr;
}

size_t H3Session::hq_pending(int64_t& stream_id, int& fin, ngtcp2_vec* vec) {
  for (Slot& slot : slots_) {
    if (!slot.used || slot.stream_id < 0 || slot.blocked) continue;
    const std::string& line = templates_.hq[slot.url];
    if (slot.sent >= line.size()) continue;
    stream_id = slot.stream_id;
    fin = 1;  // the request is the line alone
    vec[0].base = reinterpret_cast<uint8_t*>(const_cast<char*>(line.data() + slot.sent));
    vec[0].len = line.size() - slot.sent;
    return 1;
  }
  return 0;
}

// QUIC took `n` bytes of the request line (and the FIN, once all of it went).
void H3Session::hq_written(int64_t stream_id, size_t n) {
  if (Slot* slot = slot_of(stream_id)) slot->sent += n;
}

void H3Session::hq_blocked(int64_t stream_id) {
  if (Slot* slot = slot_of(stream_id)) slot->blocked = true;
}

void H3Session::save_body(Slot& slot) {
  // Numbered across the run's threads, in the order responses complete.
  static std::atomic<uint64_t> saved{0};
  const std::string path = save_dir_ + "/" + std::to_string(saved.fetch_add(1) + 1);
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(slot.body.data(), 1, slot.body.size(), f);
    std::fclose(f);
  }
  std::string().swap(slot.body);
}

void H3Session::burst_sent(int64_t now_ns) {
  // Not before the handshake: ngtcp2 would pace from its initial RTT guess
  // (333 ms), and the 1200-byte Initial would hold the next flight back
  // ~26 ms, a delay no network put there.
  if (conn_ && handshake_done_) ngtcp2_conn_update_pkt_tx_time(conn_, uint64_t(now_ns));
}

size_t H3Session::max_packet_size() const { return conn_ ? ngtcp2_conn_get_max_tx_udp_payload_size(conn_) : 1200; }
size_t H3Session::send_quantum() const { return conn_ ? ngtcp2_conn_get_send_quantum(conn_) : 1200; }

int64_t H3Session::expiry() const {
  if (!conn_ || failed_) return INT64_MAX;
  const ngtcp2_tstamp t = ngtcp2_conn_get_expiry(conn_);
  return t >= uint64_t(INT64_MAX) ? INT64_MAX : int64_t(t);
}

bool H3Session::handle_expiry(int64_t now_ns) {
  if (!conn_ || failed_) return false;
  const int rv = ngtcp2_conn_handle_expiry(conn_, uint64_t(now_ns));
  if (rv == 0) return true;
  if (rv == NGTCP2_ERR_HANDSHAKE_TIMEOUT || (rv == NGTCP2_ERR_IDLE_CLOSE && !handshake_done_))
    return fail(ErrorKind::tls, "QUIC handshake timed out");
  if (rv == NGTCP2_ERR_IDLE_CLOSE) return fail(ErrorKind::timeout, "QUIC idle timeout: the server went silent");
  return fail(ErrorKind::protocol, "QUIC: %s", ngtcp2_strerror(rv));
}

size_t H3Session::write_close(uint8_t* buf, size_t cap, int64_t now_ns) {
  if (!conn_ || ngtcp2_conn_is_in_closing_period(conn_) || ngtcp2_conn_is_in_draining_period(conn_)) return 0;
  ngtcp2_connection_close_error ccerr;
  ngtcp2_connection_close_error_default(&ccerr);
  ngtcp2_connection_close_error_set_application_error(&ccerr, NGHTTP3_H3_NO_ERROR, nullptr, 0);
  const ngtcp2_ssize n = ngtcp2_conn_write_connection_close(conn_, nullptr, nullptr, buf, cap, &ccerr, uint64_t(now_ns));
  return n > 0 ? size_t(n) : 0;
}

void H3Session::fail_all(ErrorKind kind, const char* why) {
  for (Slot& slot : slots_) {
    if (!slot.used) continue;
    const int64_t from = slot.from_ns;
    // hq-interop: a server that closes cleanly has answered every stream it
    // took, so what is left was not processed either.
    const bool unprocessed = slot.stream_id >= goaway_id_ || (hq_ && clean_);
    release(slot);
    if (unprocessed && answered_ > 0) {
      // At or above the GOAWAY's id: the server says it did not process
      // it (RFC 9114 5.2), so it is safe to send again.
      sink_.retry(from);
    } else {
      sink_.failed(from, kind, why);
    }
  }
}

void H3Session::closed(ErrorKind kind, const char* why) {
  failed_ = true;
  fail_all(kind, why);
  end();
}

void H3Session::discard() {
  failed_ = true;
  for (Slot& slot : slots_) {
    if (slot.used) release(slot);
  }
  end();
}

bool H3Session::finished() const {
  if (!conn_ || failed_) return true;
  return (draining_ || (one_request_ && submitted_)) && active_ == 0;
}

int64_t H3Session::oldest_sent() const {
  int64_t oldest = INT64_MAX;
  for (const Slot& slot : slots_) {
    if (slot.used) oldest = std::min(oldest, slot.sent_ns);
  }
  return oldest;
}

}  // namespace torii::load
