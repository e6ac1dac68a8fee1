#include "net/ocsp_refresher.h"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/http.h>
#include <openssl/ocsp.h>

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstring>
#include <ctime>

#include "log/error_log.h"

namespace torii::net {

namespace {

constexpr int kTimeoutSeconds = 10;
constexpr size_t kMaxResponse = 1 << 20;
constexpr int64_t kRetrySeconds = 300;

int64_t wall_now() { return int64_t(std::time(nullptr)); }

std::string ssl_errors() {
  std::string out;
  char buf[256];
  while (unsigned long e = ERR_get_error()) {
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "" : " (" + out + ")";
}

// Frees what OpenSSL handed out, however the fetch ends.
struct Owned {
  OCSP_REQUEST* req = nullptr;
  OCSP_CERTID* id = nullptr;
  BIO* req_bio = nullptr;
  BIO* rsp_bio = nullptr;
  BIO* conn = nullptr;
  OCSP_RESPONSE* rsp = nullptr;
  OCSP_BASICRESP* basic = nullptr;
  ~Owned() {
    OCSP_REQUEST_free(req);
    OCSP_CERTID_free(id);
    BIO_free(req_bio);
    BIO_free(rsp_bio);
    BIO_free(conn);
    OCSP_RESPONSE_free(rsp);
    OCSP_BASICRESP_free(basic);
  }
};

Result<int64_t> to_time(const ASN1_GENERALIZEDTIME* t) {
  struct tm tm {};
  if (ASN1_TIME_to_tm(t, &tm) != 1) return make_error("invalid nextUpdate time in certificate status");
  return int64_t(timegm(&tm));
}

// A TCP connection to the responder within the timeout, as a socket BIO.
// Our own connect because OpenSSL's retries a refused connection until
// the timeout ends, and a responder that is down must not hold back the
// other certificates' fetches.
Result<BIO*> connect_to(const std::string& host, const std::string& port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0)
    return make_error("cannot resolve OCSP responder \"" + host + "\" (" + gai_strerror(rc) + ")");
  std::string failure = "no address";
  BIO* bio = nullptr;
  for (addrinfo* a = res; a && !bio; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int err = connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      socklen_t len = sizeof err;
      if (poll(&p, 1, kTimeoutSeconds * 1000) != 1) err = ETIMEDOUT;
      else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    }
    if (err != 0) {
      failure = std::string("connect() failed (") + std::to_string(err) + ": " + strerror(err) + ")";
      close(fd);
      continue;
    }
    // Blocking from here, each read and write bounded.
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    timeval tv{kTimeoutSeconds, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    bio = BIO_new_socket(fd, BIO_CLOSE);
    if (!bio) close(fd);
  }
  freeaddrinfo(res);
  if (!bio) return make_error(failure);
  return bio;
}

}  // namespace

OcspRefresher& OcspRefresher::process() {
  static OcspRefresher* refresher = new OcspRefresher();  // lives as long as the process
  return *refresher;
}

Result<OcspRefresher::Fetched> OcspRefresher::fetch(const OcspStaple& st) {
  ERR_clear_error();
  Owned o;
  o.id = OCSP_cert_to_id(nullptr, st.cert(), st.issuer());
  OCSP_CERTID* request_id = o.id ? OCSP_CERTID_dup(o.id) : nullptr;
  o.req = OCSP_REQUEST_new();
  if (!request_id || !o.req || !OCSP_request_add0_id(o.req, request_id)) {
    OCSP_CERTID_free(request_id);
    return make_error("cannot make the OCSP request" + ssl_errors());
  }
  o.req_bio = ASN1_item_i2d_mem_bio(ASN1_ITEM_rptr(OCSP_REQUEST), reinterpret_cast<const ASN1_VALUE*>(o.req));
  if (!o.req_bio) return make_error("cannot encode the OCSP request" + ssl_errors());
  auto conn = connect_to(st.host, st.port);
  if (!conn) return Error{conn.error()};
  o.conn = *conn;
  // Over our connection, so no proxy either: nginx asks the responder directly.
  o.rsp_bio = OSSL_HTTP_transfer(nullptr, st.host.c_str(), st.port.c_str(), st.path.c_str(), 0, nullptr, nullptr,
                                 o.conn, o.conn, nullptr, nullptr, 0, nullptr, "application/ocsp-request",
                                 o.req_bio, nullptr, 1, kMaxResponse, kTimeoutSeconds, 0);
  if (!o.rsp_bio) return make_error("OCSP responder request failed" + ssl_errors());
  std::string der;
  char buf[4096];
  for (int n; (n = BIO_read(o.rsp_bio, buf, sizeof buf)) > 0;) der.append(buf, size_t(n));
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  o.rsp = d2i_OCSP_RESPONSE(nullptr, &p, long(der.size()));
  if (!o.rsp) return make_error("d2i_OCSP_RESPONSE() failed" + ssl_errors());
  const int code = OCSP_response_status(o.rsp);
  if (code != OCSP_RESPONSE_STATUS_SUCCESSFUL) {
    return make_error("OCSP response not successful (" + std::to_string(code) + ": " +
                      OCSP_response_status_str(code) + ")");
  }
  o.basic = OCSP_response_get1_basic(o.rsp);
  if (!o.basic) return make_error("OCSP_response_get1_basic() failed" + ssl_errors());
  // Without ssl_stapling_verify the signature is not checked, as nginx's
  // OCSP_NOVERIFY; with it, the signer must chain to a trusted CA (the
  // certificate's chain or ssl_trusted_certificate).
  if (OCSP_basic_verify(o.basic, st.chain(), st.trust(), st.verify ? OCSP_TRUSTOTHER : OCSP_NOVERIFY) != 1)
    return make_error("OCSP_basic_verify() failed" + ssl_errors());
  int status = -1;
  ASN1_GENERALIZEDTIME *this_update = nullptr, *next_update = nullptr;
  if (OCSP_resp_find_status(o.basic, o.id, &status, nullptr, nullptr, &this_update, &next_update) != 1)
    return make_error("certificate status not found in the OCSP response");
  if (status != V_OCSP_CERTSTATUS_GOOD)
    return make_error(std::string("certificate status \"") + OCSP_cert_status_str(status) +
                      "\" in the OCSP response");
  if (OCSP_check_validity(this_update, next_update, 300, -1) != 1)
    return make_error("OCSP_check_validity() failed" + ssl_errors());
  int64_t valid_until = INT64_MAX;
  if (next_update) {
    auto t = to_time(next_update);
    if (!t) return Error{t.error()};
    valid_until = *t;
  }
  return Fetched{std::move(der), valid_until};
}

void OcspRefresher::add(const std::shared_ptr<OcspStaple>& staple) {
  std::lock_guard lock(mu_);
  std::erase_if(staples_, [](const auto& w) { return w.expired(); });
  for (const auto& w : staples_) {
    auto old = w.lock();
    if (!old || old->key != staple->key) continue;
    // A reload keeps the response (and its schedule) it had.
    staple->adopt(*old);
    staple->refresh_at = old->refresh_at;
    break;
  }
  staples_.push_back(staple);
  cv_.notify_all();
}

void OcspRefresher::start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void OcspRefresher::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void OcspRefresher::refresh(OcspStaple& st) {
  const int64_t now = wall_now();
  auto fetched = fetch(st);
  int64_t next;
  if (fetched) {
    const int64_t valid = fetched->valid_until;
    st.store(std::make_shared<const std::string>(std::move(fetched->der)), valid);
    next = std::max(std::min(valid == INT64_MAX ? INT64_MAX : valid - 300, now + 3600), now + kRetrySeconds);
    TORII_LOG(info, "OCSP response for certificate \"%s\" stored, next refresh in %lld s", st.name.c_str(),
              static_cast<long long>(next - now));
  } else {
    next = now + kRetrySeconds;
    TORII_LOG(error, "%s while requesting certificate status, responder: %s, certificate: \"%s\"",
              fetched.error().c_str(), st.host.c_str(), st.name.c_str());
  }
  std::lock_guard lock(mu_);
  st.refresh_at = next;
}

void OcspRefresher::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const int64_t now = wall_now();
    std::vector<std::shared_ptr<OcspStaple>> due;
    int64_t wake = now + 3600;
    std::erase_if(staples_, [](const auto& w) { return w.expired(); });
    for (const auto& w : staples_) {
      auto st = w.lock();
      if (!st) continue;
      if (st->refresh_at <= now) due.push_back(std::move(st));
      else wake = std::min(wake, st->refresh_at);
    }
    if (!due.empty()) {
      lock.unlock();
      for (auto& st : due) refresh(*st);
      due.clear();  // a context that went away meanwhile frees its staple here, off the lock
      lock.lock();
      continue;
    }
    cv_.wait_until(lock, std::chrono::system_clock::from_time_t(time_t(wake)));
  }
}

}  // namespace torii::net
