#include "http3/session.h"

#include <gnutls/crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include <algorithm>
#include <cstring>

#include "config/ssl_config.h"
#include "core/worker.h"
#include "http3/hq_session.h"
#include "http3/stream.h"
#include "log/error_log.h"
#include "net/quic_tls.h"

namespace torii::http3 {

namespace {

// Connection-level receive window. Request bodies are held back per stream
// (a stream's window is what its handler lets in), so the connection's own
// window need not be a second limit; it still bounds what a client can
// make us buffer across streams.
constexpr uint64_t kConnectionWindow = 16 * 1024 * 1024;
// The largest datagram we accept (the endpoint's receive slots are this big).
constexpr uint64_t kMaxRecvUdpPayload = 4096;
// QPACK: a dynamic table and blocked streams bounded so a client cannot
// make the decoder hold much (QPACK bomb / blocked-stream memory).
constexpr size_t kQpackTableCapacity = 4096;
constexpr size_t kQpackBlockedStreams = 100;
// Unidirectional streams a client may open: control, QPACK encoder and
// decoder, as nginx allows (a grease stream then takes one of those three).
constexpr uint64_t kMaxUniStreams = 3;

constexpr uint64_t kH3NoError = 0x0100;

int64_t ms_to_ns(int64_t ms) { return ms * int64_t(NGTCP2_MILLISECONDS); }

Session* of(void* user) { return static_cast<Session*>(user); }

void fill_random(uint8_t* dest, size_t len) {
  // Not for keys: packet-number and padding randomness ngtcp2 asks for.
  if (gnutls_rnd(GNUTLS_RND_NONCE, dest, len) != 0) std::memset(dest, 0, len);
}

ngtcp2_conn* get_conn(ngtcp2_crypto_conn_ref* ref) { return static_cast<Session*>(ref->user_data)->quic(); }

}  // namespace

// The libraries' C callbacks, with access to the session's insides.
class Session::Callbacks {
 public:
  // ---- ngtcp2 ------------------------------------------------------------------
  static int handshake_completed(ngtcp2_conn*, void* user) {
    Session& s = *of(user);
    s.handshake_done_ = true;
    s.info_.ssl_session_reused = gnutls_session_is_resumed(s.tls_) != 0;
    s.tls_details_ = net::GnutlsDetails(s.tls_);
    s.info_.tls_details = &s.tls_details_;
    s.quiet_since_ms_ = s.host_.now_ms();
    s.host_.handshake_completed();
    // One ticket per handshake, resumed or not: TLS 1.3 clients use each
    // ticket once (RFC 8446 C.4), so a resumption must bring the next one.
    if (s.tickets_ && gnutls_session_ticket_send(s.tls_, 1, 0) != 0)
      TORII_LOG(info, "gnutls_session_ticket_send() failed, client: %s", s.info_.remote_addr.c_str());
    return 0;
  }

  static int recv_stream_data(ngtcp2_conn* conn, uint32_t flags, int64_t stream_id, uint64_t, const uint8_t* data,
                              size_t len, void* user, void*) {
    Session& s = *of(user);
    if (s.hq_) {
      if (!ngtcp2_is_bidi_stream(stream_id)) {
        // hq-interop has no unidirectional streams: a connection error, as in nginx's hq mode.
        ngtcp2_connection_close_error_set_application_error(&s.last_error_, NGHTTP3_H3_STREAM_CREATION_ERROR,
                                                            nullptr, 0);
        return NGTCP2_ERR_CALLBACK_FAILURE;
      }
      s.hq_->on_stream_data(stream_id, data, len, (flags & NGTCP2_STREAM_DATA_FLAG_FIN) != 0,
                            (flags & NGTCP2_STREAM_DATA_FLAG_EARLY) != 0);
      return 0;
    }
    if (!s.h3_) return 0;
    s.reading_early_ = (flags & NGTCP2_STREAM_DATA_FLAG_EARLY) != 0;
    const nghttp3_ssize n =
        nghttp3_conn_read_stream(s.h3_, stream_id, data, len, (flags & NGTCP2_STREAM_DATA_FLAG_FIN) != 0);
    s.reading_early_ = false;
    if (n == NGHTTP3_ERR_MALFORMED_HTTP_MESSAGING && ngtcp2_is_bidi_stream(stream_id)) {
      // A malformed request (a content-length its DATA contradicts, ...)
      // is a stream error (RFC 9114 4.1.2): the connection's other
      // requests go on. The stream's bytes go back to the connection window.
      TORII_LOG(info, "client sent a malformed HTTP/3 request (%s), stream reset, client: %s",
                nghttp3_strerror(int(n)), s.info_.remote_addr.c_str());
      s.reset_stream(stream_id, NGHTTP3_H3_MESSAGE_ERROR);
      ngtcp2_conn_extend_max_offset(conn, len);
      return 0;
    }
    if (n < 0) {
      TORII_LOG(info, "client sent invalid HTTP/3 data (%s), client: %s", nghttp3_strerror(int(n)),
                s.info_.remote_addr.c_str());
      ngtcp2_connection_close_error_set_application_error(&s.last_error_,
                                                          nghttp3_err_infer_quic_app_error_code(int(n)), nullptr, 0);
      return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    // Framing and headers are ours to acknowledge at once; body bytes only
    // when a handler takes them (Stream::acknowledge_body).
    ngtcp2_conn_extend_max_stream_offset(conn, stream_id, uint64_t(n));
    ngtcp2_conn_extend_max_offset(conn, uint64_t(n));
    return 0;
  }

  static int acked_stream_data_offset(ngtcp2_conn*, int64_t stream_id, uint64_t, uint64_t len, void* user, void*) {
    Session& s = *of(user);
    if (s.hq_) s.hq_->on_acked(stream_id, len);
    if (s.h3_ && nghttp3_conn_add_ack_offset(s.h3_, stream_id, len) != 0) return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
  }

  static int stream_close(ngtcp2_conn* conn, uint32_t flags, int64_t stream_id, uint64_t app_error, void* user,
                          void*) {
    Session& s = *of(user);
    if (!(flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET)) app_error = kH3NoError;
    if (s.hq_) {
      s.hq_->on_stream_close(stream_id);
      // A request stream ended: the client may open another.
      if (ngtcp2_is_bidi_stream(stream_id) && !ngtcp2_conn_is_local_stream(conn, stream_id))
        ngtcp2_conn_extend_max_streams_bidi(conn, 1);
      return 0;
    }
    if (!s.h3_) return 0;
    const int rv = nghttp3_conn_close_stream(s.h3_, stream_id, app_error);
    if (rv == NGHTTP3_ERR_STREAM_NOT_FOUND) {
      s.stream_gone(stream_id);
      if (ngtcp2_is_bidi_stream(stream_id) && !ngtcp2_conn_is_local_stream(conn, stream_id))
        ngtcp2_conn_extend_max_streams_bidi(conn, 1);
      return 0;
    }
    if (rv != 0) {
      ngtcp2_connection_close_error_set_application_error(&s.last_error_, nghttp3_err_infer_quic_app_error_code(rv),
                                                          nullptr, 0);
      return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    return 0;
  }

  // The client abandoned its request (RESET_STREAM or STOP_SENDING).
  static int stream_reset(ngtcp2_conn*, int64_t stream_id, uint64_t, uint64_t app_error, void* user, void*) {
    Session& s = *of(user);
    if (s.hq_) s.hq_->on_stream_reset(stream_id);
    if (s.h3_ && !ngtcp2_is_bidi_stream(stream_id)) return s.uni_stream_reset(stream_id, app_error);
    if (s.h3_ && !s.count_cancel(stream_id)) return NGTCP2_ERR_CALLBACK_FAILURE;
    if (s.h3_ && nghttp3_conn_shutdown_stream_read(s.h3_, stream_id) != 0) return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
  }
  static int stream_stop_sending(ngtcp2_conn*, int64_t stream_id, uint64_t, void* user, void*) {
    Session& s = *of(user);
    if (s.hq_) s.hq_->on_stream_reset(stream_id);
    if (s.h3_ && !s.count_cancel(stream_id)) return NGTCP2_ERR_CALLBACK_FAILURE;
    if (s.h3_ && nghttp3_conn_shutdown_stream_read(s.h3_, stream_id) != 0) return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
  }

  static void rand(uint8_t* dest, size_t len, const ngtcp2_rand_ctx*) { fill_random(dest, len); }

  // Our connection IDs carry the worker's byte first; their stateless-reset
  // tokens derive from the host key, so any worker (or machine) holding
  // the key can reset a connection it has lost (RFC 9000 10.3).
  static int get_new_connection_id(ngtcp2_conn*, ngtcp2_cid* cid, uint8_t* token, size_t cidlen, void* user) {
    Session& s = *of(user);
    if (gnutls_rnd(GNUTLS_RND_RANDOM, cid->data, cidlen) != 0) return NGTCP2_ERR_CALLBACK_FAILURE;
    cid->data[0] = s.worker_byte_;
    cid->datalen = cidlen;
    if (ngtcp2_crypto_generate_stateless_reset_token(token, reinterpret_cast<const uint8_t*>(s.static_secret_->data()),
                                                     s.static_secret_->size(), cid) != 0)
      return NGTCP2_ERR_CALLBACK_FAILURE;
    s.host_.cid_added(*cid);
    return 0;
  }

  static int remove_connection_id(ngtcp2_conn*, const ngtcp2_cid* cid, void* user) {
    of(user)->host_.cid_removed(*cid);
    return 0;
  }

  // A request stream starts: client_header_timeout runs until its head is in.
  static int stream_open(ngtcp2_conn* conn, int64_t stream_id, void* user) {
    Session& s = *of(user);
    if (!s.hq_ && ngtcp2_is_bidi_stream(stream_id) && !ngtcp2_conn_is_local_stream(conn, stream_id))
      s.awaiting_head_.emplace(stream_id, s.host_.now_ms());
    return 0;
  }

  static int extend_max_remote_streams_bidi(ngtcp2_conn*, uint64_t max_streams, void* user) {
    Session& s = *of(user);
    if (s.h3_) nghttp3_conn_set_max_client_streams_bidi(s.h3_, max_streams);
    return 0;
  }

  static int extend_max_stream_data(ngtcp2_conn*, int64_t stream_id, uint64_t, void* user, void*) {
    Session& s = *of(user);
    if (s.hq_) s.hq_->unblock(stream_id);
    if (s.h3_ && nghttp3_conn_unblock_stream(s.h3_, stream_id) != 0) return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
  }

  static int recv_tx_key(ngtcp2_conn*, ngtcp2_crypto_level level, void* user) {
    if (level != NGTCP2_CRYPTO_LEVEL_APPLICATION) return 0;
    return of(user)->setup_application() ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
  }

  // ---- nghttp3 -----------------------------------------------------------------
  static int h3_acked_stream_data(nghttp3_conn*, int64_t, uint64_t len, void*, void* stream_user) {
    if (auto* st = static_cast<Stream*>(stream_user)) st->on_acked(len);
    return 0;
  }

  static int h3_stream_close(nghttp3_conn*, int64_t stream_id, uint64_t, void* user, void*) {
    of(user)->on_stream_closed(stream_id);
    return 0;
  }

  static int h3_recv_data(nghttp3_conn*, int64_t stream_id, const uint8_t* data, size_t len, void* user,
                          void* stream_user) {
    Session& s = *of(user);
    auto* st = static_cast<Stream*>(stream_user);
    if (!st) {
      s.consume(stream_id, len);
      return 0;
    }
    st->on_data(data, len);
    s.deliver_.push_back(stream_id);
    return 0;
  }

  static int h3_deferred_consume(nghttp3_conn*, int64_t stream_id, size_t consumed, void* user, void*) {
    of(user)->consume(stream_id, consumed);
    return 0;
  }

  static int h3_begin_headers(nghttp3_conn* h3, int64_t stream_id, void* user, void*) {
    Session& s = *of(user);
    // QUIC's stream limit (http3_max_concurrent_streams, the transport
    // parameter) already bounds how many requests can be open.
    auto st = std::make_unique<Stream>(s, stream_id);
    if (s.reading_early_) st->mark_early_data();
    nghttp3_conn_set_stream_user_data(h3, stream_id, st.get());
    s.streams_.insert_or_assign(stream_id, std::move(st));
    return 0;
  }

  static int h3_recv_header(nghttp3_conn*, int64_t, int32_t, nghttp3_rcbuf* name, nghttp3_rcbuf* value, uint8_t,
                            void* user, void* stream_user) {
    Session& s = *of(user);
    if (auto* st = static_cast<Stream*>(stream_user)) st->add_field(name, value, s.field_limit_, s.list_limit_);
    return 0;
  }

  static int h3_end_headers(nghttp3_conn*, int64_t stream_id, int fin, void* user, void* stream_user) {
    Session& s = *of(user);
    auto* st = static_cast<Stream*>(stream_user);
    if (!st) return 0;
    st->headers_done(fin != 0);
    s.awaiting_head_.erase(stream_id);
    if (s.reading_early_) st->mark_early_data();
    s.ready_.push_back(stream_id);
    return 0;
  }

  static int h3_end_stream(nghttp3_conn*, int64_t stream_id, void* user, void* stream_user) {
    Session& s = *of(user);
    if (auto* st = static_cast<Stream*>(stream_user)) {
      st->on_remote_end();
      s.deliver_.push_back(stream_id);
    }
    return 0;
  }

  static int h3_stop_sending(nghttp3_conn*, int64_t stream_id, uint64_t app_error, void* user, void*) {
    Session& s = *of(user);
    if (ngtcp2_conn_shutdown_stream_read(s.conn_, stream_id, app_error) != 0) return NGHTTP3_ERR_CALLBACK_FAILURE;
    return 0;
  }

  static int h3_reset_stream(nghttp3_conn*, int64_t stream_id, uint64_t app_error, void* user, void*) {
    Session& s = *of(user);
    // nghttp3 resets a request whose fields are malformed (RFC 9114 4.1.2).
    if (app_error == NGHTTP3_H3_MESSAGE_ERROR)
      TORII_LOG(info, "client sent a malformed HTTP/3 request header, stream reset, client: %s",
                s.info_.remote_addr.c_str());
    if (ngtcp2_conn_shutdown_stream_write(s.conn_, stream_id, app_error) != 0) return NGHTTP3_ERR_CALLBACK_FAILURE;
    return 0;
  }

  // ---- GnuTLS: SNI picks the server block, and with it the certificate ---------
  static int post_client_hello(gnutls_session_t tls) {
    auto* ref = static_cast<ngtcp2_crypto_conn_ref*>(gnutls_session_get_ptr(tls));
    Session& s = *static_cast<Session*>(ref->user_data);
    char name[256];
    size_t len = sizeof name - 1;
    unsigned int type = 0;
    if (gnutls_server_name_get(tls, name, &len, &type, 0) != 0 || type != GNUTLS_NAME_DNS) return 0;
    name[std::min(len, sizeof name - 1)] = '\0';
    std::string host(name);
    for (auto& c : host)
      if (c >= 'A' && c <= 'Z') c = char(c + 32);
    s.info_.ssl_server_name = host;
    const config::Server& srv = config::find_server(*s.binding_->group, host);
    if (srv.ssl && srv.ssl->quic_credentials)
      gnutls_credentials_set(tls, GNUTLS_CRD_CERTIFICATE, srv.ssl->quic_credentials.get());
    return 0;
  }
};

Session::Session(SessionHost& host, const http::ConnectionInfo& info, std::shared_ptr<core::ListenBinding> binding)
    : host_(host), info_(info), binding_(std::move(binding)) {
  config_ = binding_->config;
  const config::Server& srv = *binding_->group->default_server;
  const auto& h3 = srv.http3_settings;
  max_streams_ = h3.max_concurrent_streams;
  stream_buffer_ = h3.stream_buffer_size;
  field_limit_ = srv.large_client_header_buffers.size;
  list_limit_ = srv.large_client_header_buffers.size * srv.large_client_header_buffers.number;
  idle_ms_ = srv.settings.keepalive_timeout.count();
  header_timeout_ms_ = srv.client_header_timeout.count();
  keepalive_time_ms_ = srv.settings.core.keepalive_time.count();
  max_requests_ = srv.settings.keepalive_requests;
  info_.tls = true;
  ngtcp2_path_storage_zero(&carry_path_);
}

Session::~Session() {
  hq_.reset();
  streams_.clear();
  graveyard_.clear();
  if (h3_) nghttp3_conn_del(h3_);
  if (conn_) ngtcp2_conn_del(conn_);
  if (tls_) gnutls_deinit(tls_);
}

bool Session::start(const SessionStart& st, int64_t now_ns) {
  static_secret_ = st.static_secret;
  worker_byte_ = st.worker_byte;
  const config::Server& srv = *binding_->group->default_server;
  if (!srv.ssl || !srv.ssl->quic_credentials) return false;

  ngtcp2_callbacks cb{};
  cb.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb;
  cb.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
  cb.handshake_completed = &Callbacks::handshake_completed;
  cb.encrypt = ngtcp2_crypto_encrypt_cb;
  cb.decrypt = ngtcp2_crypto_decrypt_cb;
  cb.hp_mask = ngtcp2_crypto_hp_mask_cb;
  cb.recv_stream_data = &Callbacks::recv_stream_data;
  cb.acked_stream_data_offset = &Callbacks::acked_stream_data_offset;
  cb.stream_close = &Callbacks::stream_close;
  cb.rand = &Callbacks::rand;
  cb.get_new_connection_id = &Callbacks::get_new_connection_id;
  cb.remove_connection_id = &Callbacks::remove_connection_id;
  cb.update_key = ngtcp2_crypto_update_key_cb;
  cb.stream_reset = &Callbacks::stream_reset;
  cb.extend_max_remote_streams_bidi = &Callbacks::extend_max_remote_streams_bidi;
  cb.extend_max_stream_data = &Callbacks::extend_max_stream_data;
  cb.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
  cb.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
  cb.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
  cb.stream_stop_sending = &Callbacks::stream_stop_sending;
  cb.version_negotiation = ngtcp2_crypto_version_negotiation_cb;
  cb.recv_tx_key = &Callbacks::recv_tx_key;
  cb.stream_open = &Callbacks::stream_open;

  ngtcp2_settings settings;
  ngtcp2_settings_default(&settings);
  settings.initial_ts = uint64_t(now_ns);
  // client_header_timeout bounds the handshake, as it does over TCP
  // (slowloris over QUIC: a half-open handshake holds state).
  settings.handshake_timeout = uint64_t(ms_to_ns(int64_t(st.handshake_timeout_ms)));
  settings.max_stream_window = std::max<uint64_t>(stream_buffer_, 64 * 1024);
  settings.max_window = kConnectionWindow;

  ngtcp2_transport_params params;
  ngtcp2_transport_params_default(&params);
  // Flow control: each request body is held to http3_stream_buffer_size
  // until its handler reads it, so a client cannot make us buffer more.
  params.initial_max_stream_data_bidi_remote = stream_buffer_;
  params.initial_max_stream_data_uni = 64 * 1024;
  params.initial_max_data = kConnectionWindow;
  // Stream floods: at most http3_max_concurrent_streams requests open; a
  // new one is allowed only as one closes.
  params.initial_max_streams_bidi = max_streams_;
  params.initial_max_streams_uni = kMaxUniStreams;
  params.max_idle_timeout = uint64_t(ms_to_ns(idle_ms_));  // keepalive_timeout
  params.max_udp_payload_size = kMaxRecvUdpPayload;
  params.active_connection_id_limit = srv.http3_settings.active_connection_id_limit;
  params.original_dcid = st.original_dcid;
  if (st.retried) {
    params.retry_scid = st.client_dcid;
    params.retry_scid_present = 1;
  }

  ngtcp2_cid scid;
  scid.datalen = kCidLength;
  if (gnutls_rnd(GNUTLS_RND_RANDOM, scid.data, scid.datalen) != 0) return false;
  scid.data[0] = worker_byte_;
  params.stateless_reset_token_present = 1;
  if (ngtcp2_crypto_generate_stateless_reset_token(params.stateless_reset_token,
                                                   reinterpret_cast<const uint8_t*>(static_secret_->data()),
                                                   static_secret_->size(), &scid) != 0)
    return false;

  // ngtcp2 enforces the anti-amplification limit (RFC 9000 8.1): until the
  // client's address is validated (a Handshake packet, or a Retry token)
  // it sends at most three times what it received, so a spoofed Initial
  // cannot make us flood its victim.
  if (ngtcp2_conn_server_new(&conn_, &st.client_scid, &scid, &st.path, st.version, &cb, &settings, &params, nullptr,
                             this) != 0)
    return false;
  host_.cid_added(scid);

  // 0-RTT only with ssl_early_data on and tickets to carry it; the anti-replay
  // check and the 425 rule for unsafe methods then apply as over TCP.
  const bool early = srv.ssl->early_data && srv.ssl->quic_ticket_key && net::quic_anti_replay();
  unsigned flags = GNUTLS_SERVER | GNUTLS_NO_AUTO_SEND_TICKET | GNUTLS_NO_END_OF_EARLY_DATA;
  if (early) flags |= GNUTLS_ENABLE_EARLY_DATA;
  if (gnutls_init(&tls_, flags) != 0) return false;
  if (gnutls_priority_set_direct(tls_, net::kQuicPriority, nullptr) != 0) return false;
  if (ngtcp2_crypto_gnutls_configure_server_session(tls_) != 0) return false;
  conn_ref_.get_conn = &get_conn;
  conn_ref_.user_data = this;
  gnutls_session_set_ptr(tls_, &conn_ref_);
  gnutls_handshake_set_post_client_hello_function(tls_, &Callbacks::post_client_hello);
  if (gnutls_credentials_set(tls_, GNUTLS_CRD_CERTIFICATE, srv.ssl->quic_credentials.get()) != 0) return false;
  if (const auto& key = srv.ssl->quic_ticket_key) {
    // Stateless tickets (GnuTLS rotates the encryption key it derives from
    // this one): a returning client skips the certificate and its signature.
    gnutls_datum_t k{reinterpret_cast<unsigned char*>(const_cast<char*>(key->data())), unsigned(key->size())};
    if (gnutls_session_ticket_enable_server(tls_, &k) != 0) return false;
    tickets_ = true;
  }
  if (early) {
    gnutls_anti_replay_enable(tls_, net::quic_anti_replay());
    // RFC 9001 4.6.1: a ticket that allows 0-RTT says 0xffffffff; QUIC's
    // flow control, not TLS, bounds the early bytes.
    gnutls_record_set_max_early_data_size(tls_, 0xffffffffu);
  }
  // RFC 9114 3.1: "h3" or no connection (GNUTLS_ALPN_MANDATORY); with
  // http3_hq on, "hq-interop" too (alone if `http3 off`, as nginx offers it).
  auto datum = [](std::string_view p) {
    return gnutls_datum_t{reinterpret_cast<unsigned char*>(const_cast<char*>(p.data())), unsigned(p.size())};
  };
  gnutls_datum_t alpn[2];
  unsigned protocols = 0;
  if (srv.http3_settings.enabled || !srv.http3_settings.hq) alpn[protocols++] = datum(net::kAlpnH3);
  if (srv.http3_settings.hq) alpn[protocols++] = datum(net::kAlpnHq);
  gnutls_alpn_set_protocols(tls_, alpn, protocols, GNUTLS_ALPN_MANDATORY | GNUTLS_ALPN_SERVER_PRECEDENCE);
  ngtcp2_conn_set_tls_native_handle(conn_, tls_);
  ngtcp2_connection_close_error_default(&last_error_);
  return true;
}

bool Session::setup_application() {
  if (h3_ || hq_) return true;
  gnutls_datum_t chosen{};
  if (gnutls_alpn_get_selected_protocol(tls_, &chosen) == 0 &&
      std::string_view(reinterpret_cast<const char*>(chosen.data), chosen.size) == net::kAlpnHq) {
    hq_ = std::make_unique<HqSession>(*this);
    return true;
  }
  return setup_http3();
}

bool Session::setup_http3() {
  if (h3_) return true;
  if (ngtcp2_conn_get_max_local_streams_uni(conn_) < 3) return false;  // RFC 9114 6.2: control + QPACK streams
  nghttp3_callbacks cb{};
  cb.acked_stream_data = &Callbacks::h3_acked_stream_data;
  cb.stream_close = &Callbacks::h3_stream_close;
  cb.recv_data = &Callbacks::h3_recv_data;
  cb.deferred_consume = &Callbacks::h3_deferred_consume;
  cb.begin_headers = &Callbacks::h3_begin_headers;
  cb.recv_header = &Callbacks::h3_recv_header;
  cb.end_headers = &Callbacks::h3_end_headers;
  cb.stop_sending = &Callbacks::h3_stop_sending;
  cb.end_stream = &Callbacks::h3_end_stream;
  cb.reset_stream = &Callbacks::h3_reset_stream;
  nghttp3_settings settings;
  nghttp3_settings_default(&settings);
  // large_client_header_buffers bounds the decoded field section (431 over it).
  settings.max_field_section_size = list_limit_;
  settings.qpack_max_dtable_capacity = kQpackTableCapacity;
  settings.qpack_blocked_streams = kQpackBlockedStreams;
  if (nghttp3_conn_server_new(&h3_, &cb, &settings, nghttp3_mem_default(), this) != 0) return false;
  nghttp3_conn_set_max_client_streams_bidi(h3_, max_streams_);
  int64_t control = 0, enc = 0, dec = 0;
  if (ngtcp2_conn_open_uni_stream(conn_, &control, nullptr) != 0) return false;
  if (nghttp3_conn_bind_control_stream(h3_, control) != 0) return false;
  if (ngtcp2_conn_open_uni_stream(conn_, &enc, nullptr) != 0) return false;
  if (ngtcp2_conn_open_uni_stream(conn_, &dec, nullptr) != 0) return false;
  return nghttp3_conn_bind_qpack_streams(h3_, enc, dec) == 0;
}

Stream* Session::find(int64_t id) {
  if (!h3_) return nullptr;
  const auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : it->second.get();
}

Session::Status Session::fail(int liberr) {
  if (liberr == NGTCP2_ERR_CRYPTO) {
    ngtcp2_connection_close_error_set_transport_error_tls_alert(&last_error_, ngtcp2_conn_get_tls_alert(conn_),
                                                                nullptr, 0);
  } else if (last_error_.error_code == 0 && last_error_.type == NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_TRANSPORT) {
    ngtcp2_connection_close_error_set_transport_error_liberr(&last_error_, liberr, nullptr, 0);
  }
  return Status::closing;
}

Session::Status Session::fail_app(uint64_t app_error) {
  ngtcp2_connection_close_error_set_application_error(&last_error_, app_error, nullptr, 0);
  return Status::closing;
}

void Session::build_close_packet(int64_t now_ns) {
  if (!close_packet_.empty() || !conn_ || ngtcp2_conn_is_in_draining_period(conn_)) return;
  close_packet_.resize(NGTCP2_MAX_UDP_PAYLOAD_SIZE);
  ngtcp2_path_storage ps;
  ngtcp2_path_storage_zero(&ps);
  ngtcp2_pkt_info pi;
  const ngtcp2_ssize n =
      ngtcp2_conn_write_connection_close(conn_, &ps.path, &pi, reinterpret_cast<uint8_t*>(close_packet_.data()),
                                         close_packet_.size(), &last_error_, uint64_t(now_ns));
  close_packet_.resize(n > 0 ? size_t(n) : 0);
}

Session::Status Session::receive(const ngtcp2_path& path, const ngtcp2_pkt_info& pi, const uint8_t* data, size_t len,
                                 int64_t now_ns) {
  in_callback_ = true;
  const int rv = ngtcp2_conn_read_pkt(conn_, &path, &pi, data, len, uint64_t(now_ns));
  in_callback_ = false;
  if (rv != 0) {
    switch (rv) {
      case NGTCP2_ERR_DRAINING:
        return Status::draining;
      case NGTCP2_ERR_RETRY:
      case NGTCP2_ERR_DROP_CONN:
        return Status::drop;
      default:
        TORII_LOG(info, "QUIC connection failed (%s), client: %s", ngtcp2_strerror(rv), info_.remote_addr.c_str());
        fail(rv);
        build_close_packet(now_ns);
        return Status::closing;
    }
  }
  run_ready();
  service();
  return Status::ok;
}

Session::Status Session::handle_expiry(int64_t now_ns) {
  const int rv = ngtcp2_conn_handle_expiry(conn_, uint64_t(now_ns));
  if (rv == 0) return Status::ok;
  if (rv == NGTCP2_ERR_IDLE_CLOSE) return Status::drop;  // silently (RFC 9000 10.1)
  fail(rv);
  build_close_packet(now_ns);
  return Status::closing;
}

int64_t Session::expiry_ns() const { return int64_t(ngtcp2_conn_get_expiry(conn_)); }
int64_t Session::pto_ns() const { return int64_t(ngtcp2_conn_get_pto(conn_)); }
size_t Session::max_packet_size() const { return ngtcp2_conn_get_max_tx_udp_payload_size(conn_); }
size_t Session::send_quantum() const { return ngtcp2_conn_get_send_quantum(conn_); }
const ngtcp2_path* Session::path() const { return ngtcp2_conn_get_path(conn_); }

size_t Session::produce(uint8_t* buf, size_t cap, size_t max_packets, ngtcp2_path_storage& ps, size_t& segment,
                        int64_t now_ns, Status& status) {
  submit_pending();
  const size_t max_pkt = max_packet_size();
  const ngtcp2_tstamp ts = uint64_t(now_ns);
  size_t written = 0, packets = 0;
  segment = 0;
  ngtcp2_path_storage cur;
  ngtcp2_path_storage_zero(&cur);
  while (packets < max_packets && written + max_pkt <= cap) {
    int64_t stream_id = -1;
    int fin = 0;
    nghttp3_vec vec[16];
    const ssize_t count = next_stream_data(stream_id, fin, vec, 16);
    if (count < 0) {
      status = fail_app(nghttp3_err_infer_quic_app_error_code(int(count)));
      build_close_packet(now_ns);
      return written;
    }
    uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE;
    if (fin) flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
    ngtcp2_ssize accepted = -1;
    ngtcp2_pkt_info pi;
    const ngtcp2_ssize n =
        ngtcp2_conn_writev_stream(conn_, &cur.path, &pi, buf + written, max_pkt, &accepted, flags, stream_id,
                                  reinterpret_cast<const ngtcp2_vec*>(vec), size_t(count), ts);
    if (n < 0) {
      if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED) {
        stream_blocked(stream_id);
        continue;
      }
      if (n == NGTCP2_ERR_STREAM_SHUT_WR) {
        stream_shut(stream_id);
        continue;
      }
      if (n == NGTCP2_ERR_WRITE_MORE) {
        if (!stream_written(stream_id, size_t(accepted), fin != 0)) {
          status = fail_app(NGHTTP3_H3_INTERNAL_ERROR);
          build_close_packet(now_ns);
          return written;
        }
        continue;
      }
      status = fail(int(n));
      build_close_packet(now_ns);
      return written;
    }
    if (accepted >= 0 && !stream_written(stream_id, size_t(accepted), fin != 0)) {
      status = fail_app(NGHTTP3_H3_INTERNAL_ERROR);
      build_close_packet(now_ns);
      return written;
    }
    if (n == 0) break;  // nothing more (or congestion-limited)
    if (packets == 0) {
      ngtcp2_path_copy(&ps.path, &cur.path);
      segment = size_t(n);
    } else if (!ngtcp2_path_eq(&ps.path, &cur.path) || size_t(n) > segment) {
      // Cannot share this batch (GSO needs one path and equal segments):
      // the caller sends the batch, then this packet alone.
      carry_offset_ = written;
      carry_len_ = size_t(n);
      ngtcp2_path_copy(&carry_path_.path, &cur.path);
      break;
    }
    written += size_t(n);
    ++packets;
    if (size_t(n) < segment) break;  // a short packet ends a GSO batch
  }
  // No ngtcp2 pacing (ngtcp2_conn_update_pkt_tx_time): its gaps are
  // microseconds, below the timer wheel's 8 ms resolution, so honouring
  // them would cap a connection at one send quantum per tick. Bursts stay
  // bounded by the congestion window and the quantum per produce().
  return written;
}

ssize_t Session::next_stream_data(int64_t& id, int& fin, nghttp3_vec* vec, size_t veccnt) {
  if (!ngtcp2_conn_get_max_data_left(conn_)) return 0;
  if (hq_) {
    bool f = false;
    // nghttp3_vec and ngtcp2_vec are the same {base, len} pair.
    const size_t n = hq_->next(id, f, reinterpret_cast<ngtcp2_vec*>(vec), veccnt);
    fin = f ? 1 : 0;
    return ssize_t(n);
  }
  if (!h3_) return 0;
  return nghttp3_conn_writev_stream(h3_, &id, &fin, vec, veccnt);
}

bool Session::stream_written(int64_t id, size_t n, bool fin) {
  if (hq_) {
    hq_->written(id, n, fin);
    return true;
  }
  return nghttp3_conn_add_write_offset(h3_, id, n) == 0;
}

void Session::stream_blocked(int64_t id) {
  if (hq_) {
    hq_->blocked(id);
  } else {
    nghttp3_conn_block_stream(h3_, id);
  }
}

void Session::stream_shut(int64_t id) {
  if (hq_) {
    hq_->shut(id);
  } else {
    nghttp3_conn_shutdown_stream_write(h3_, id);
  }
}

bool Session::take_carry(size_t& offset, size_t& len, ngtcp2_path_storage& path) {
  if (carry_len_ == 0) return false;
  offset = carry_offset_;
  len = carry_len_;
  ngtcp2_path_copy(&path.path, &carry_path_.path);
  carry_len_ = 0;
  return true;
}

void Session::count_request() {
  ++requests_;
  info_.requests = requests_;
  // keepalive_requests: this connection takes no new requests.
  if (requests_ >= max_requests_) shutdown();
}

size_t Session::open_streams() const { return streams_.size() + (hq_ ? hq_->open_streams() : 0); }

void Session::run_ready() {
  if (hq_) hq_->run_ready();
  if (ready_.empty()) return;
  batch_.clear();
  batch_.swap(ready_);
  for (int64_t id : batch_) {
    Stream* s = find(id);
    if (!s || s->closed() || s->started()) continue;
    ++requests_;
    info_.requests = requests_;
    s->run();
    // keepalive_requests, keepalive_time: this connection takes no new
    // requests (as nginx's HTTP/3: GOAWAY after this one).
    if (requests_ >= max_requests_ || host_.now_ms() - info_.start_ms > keepalive_time_ms_) shutdown();
  }
  batch_.clear();
}

bool Session::service() {
  bool ran = hq_ && hq_->service();
  while (!deliver_.empty() || !drained_.empty()) {
    batch_.clear();
    batch_.swap(deliver_);
    for (int64_t id : batch_) {
      if (Stream* s = find(id)) {
        s->deliver_body();
        ran = true;
      }
    }
    batch_.clear();
    batch_.swap(drained_);
    for (int64_t id : batch_) {
      Stream* s = find(id);
      if (s && s->drain_due()) {
        s->fire_drain();
        ran = true;
      }
    }
    batch_.clear();
  }
  return ran;
}

void Session::submit_pending() {
  if (submit_.empty()) return;
  std::vector<int64_t> ids;
  ids.swap(submit_);
  for (int64_t id : ids) {
    Stream* s = find(id);
    if (s && s->head_ready()) s->submit();
  }
  ids.clear();
  if (submit_.empty()) submit_.swap(ids);  // keep the capacity
}

void Session::shutdown() {
  if (hq_) {
    // hq-interop has no GOAWAY: new streams are refused, those open finish.
    going_away_ = true;
    hq_->shutdown();
    host_.wake();
    return;
  }
  if (going_away_ || !h3_) {
    going_away_ = true;
    return;
  }
  going_away_ = true;
  // A GOAWAY naming the largest id first (no new requests, please), then
  // the real one from the I/O shell a couple of round trips later.
  nghttp3_conn_submit_shutdown_notice(h3_);
  host_.wake();
}

void Session::finish_shutdown() {
  if (h3_) nghttp3_conn_shutdown(h3_);
  host_.wake();
}

void Session::close_gracefully(int64_t now_ns) {
  fail_app(NGHTTP3_H3_NO_ERROR);
  build_close_packet(now_ns);
}

void Session::stream_output_changed(Stream& s) {
  if (s.head_ready()) submit_.push_back(s.id());
  host_.wake();
}

void Session::stream_wants_delivery(Stream& s) {
  deliver_.push_back(s.id());
  host_.wake();
}

void Session::stream_drain_due(Stream& s) {
  drained_.push_back(s.id());
  host_.wake();
}

void Session::consume(int64_t id, size_t n) {
  ngtcp2_conn_extend_max_stream_offset(conn_, id, n);
  ngtcp2_conn_extend_max_offset(conn_, n);
}

void Session::reset_stream(int64_t id, uint64_t app_error) {
  ngtcp2_conn_shutdown_stream(conn_, id, app_error);
  if (h3_) nghttp3_conn_shutdown_stream_read(h3_, id);
}

void Session::stop_reading(int64_t id) {
  ngtcp2_conn_shutdown_stream_read(conn_, id, NGHTTP3_H3_NO_ERROR);
  if (h3_) nghttp3_conn_shutdown_stream_read(h3_, id);
}

int64_t Session::next_deadline() const {
  int64_t due = INT64_MAX;
  for (const auto& [id, st] : streams_) due = std::min({due, st->body_deadline(), st->send_deadline()});
  for (const auto& [id, opened] : awaiting_head_) due = std::min(due, opened + header_timeout_ms_);
  // nginx's HTTP/3 keepalive: from the end of the last request, whatever
  // else (PINGs, ACKs) the client sends meanwhile. QUIC's own idle timeout
  // (the same value) ends a silent connection.
  if (quiet()) due = std::min(due, quiet_since_ms_ + idle_ms_);
  return due;
}

bool Session::expire_deadlines(int64_t now_ms) {
  if (quiet() && quiet_since_ms_ + idle_ms_ <= now_ms) return true;
  std::vector<int64_t> due;
  for (const auto& [id, opened] : awaiting_head_)
    if (opened + header_timeout_ms_ <= now_ms) due.push_back(id);
  for (int64_t id : due) {
    awaiting_head_.erase(id);
    TORII_LOG(info, "client timed out (110: Connection timed out) while reading client request headers, client: %s",
              info_.remote_addr.c_str());
    reset_stream(id, NGHTTP3_H3_REQUEST_CANCELLED);
  }
  // Collected first: a 408 runs handler code that may change streams_.
  due.clear();
  for (const auto& [id, st] : streams_)
    if (std::min(st->body_deadline(), st->send_deadline()) <= now_ms) due.push_back(id);
  for (int64_t id : due) {
    auto it = streams_.find(id);
    if (it == streams_.end()) continue;
    if (it->second->send_deadline() <= now_ms) {
      it->second->send_timed_out();
    } else {
      it->second->body_timed_out();
    }
  }
  if (!due.empty()) host_.wake();
  return false;
}

// ngtcp2 never reports a client's reset unidirectional stream as closed
// (its sending half is never acknowledged), so nghttp3 is told here: a
// control or QPACK stream closed "at any point" is a connection error
// (RFC 9114 6.2.1, RFC 9204 4.2); one of an unknown type, or reset before
// its type came, is let go (RFC 9114 6.2).
int Session::uni_stream_reset(int64_t id, uint64_t app_error) {
  const int rv = nghttp3_conn_close_stream(h3_, id, app_error);
  if (rv == 0 || rv == NGHTTP3_ERR_STREAM_NOT_FOUND) return 0;
  TORII_LOG(info, "client closed a critical HTTP/3 stream (%s), client: %s", nghttp3_strerror(rv),
            info_.remote_addr.c_str());
  ngtcp2_connection_close_error_set_application_error(&last_error_, nghttp3_err_infer_quic_app_error_code(rv),
                                                      nullptr, 0);
  return NGTCP2_ERR_CALLBACK_FAILURE;
}

bool Session::count_cancel(int64_t id) {
  if (!ngtcp2_is_bidi_stream(id)) return true;
  Stream* st = find(id);
  if (!st) return awaiting_head_.erase(id) > 0 ? count_cancel_budget() : true;  // cancelled before any head
  // Once per stream (RESET_STREAM and STOP_SENDING often come together),
  // and only for a request whose response had not ended.
  if (st->cancel_counted() || st->response_complete()) return true;
  st->mark_cancel_counted();
  awaiting_head_.erase(id);
  return count_cancel_budget();
}

bool Session::count_cancel_budget() {
  if (flood_.count(http2::FloodGuard::Kind::reset, host_.now_ms())) return true;
  TORII_LOG(info, "client misbehaved over HTTP/3 (%s), closing connection, client: %s", flood_.reason(),
            info_.remote_addr.c_str());
  ngtcp2_connection_close_error_set_application_error(&last_error_, NGHTTP3_H3_EXCESSIVE_LOAD, nullptr, 0);
  return false;
}

void Session::stream_gone(int64_t id) {
  awaiting_head_.erase(id);
  if (streams_.empty() && awaiting_head_.empty()) quiet_since_ms_ = host_.now_ms();
}

void Session::on_stream_closed(int64_t id) {
  if (auto it = streams_.find(id); it != streams_.end()) {
    it->second->on_close();
    graveyard_.push_back(std::move(it->second));
    streams_.erase(it);
  }
  stream_gone(id);
  // A request stream ended: the client may open another.
  if (ngtcp2_is_bidi_stream(id) && !ngtcp2_conn_is_local_stream(conn_, id)) ngtcp2_conn_extend_max_streams_bidi(conn_, 1);
}

void Session::abort_streams() {
  if (hq_) hq_->abort_streams();
  for (auto& [id, s] : streams_)
    if (!s->closed()) s->on_close();
}

void Session::collect_closed() {
  graveyard_.clear();
  if (hq_) hq_->collect_closed();
}

}  // namespace torii::http3
