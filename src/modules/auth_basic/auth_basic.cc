#include "modules/auth_basic/auth_basic.h"

#include <fcntl.h>
#include <strings.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>

#include "core/blocking_pool.h"
#include "core/event_loop.h"
#include "http/basic_credentials.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/variables.h"
#include "log/error_log.h"
#include "modules/access/access_phase.h"
#include "modules/auth_basic/password.h"

namespace torii::auth {

namespace {

constexpr size_t kMaxFileSize = 16 << 20;
constexpr size_t kMaxRemembered = 4096;

// nginx's ngx_http_auth_basic_user (http/basic_credentials).
bool basic_credentials(const http::RequestHead& req, std::string& user, std::string& password) {
  http::BasicCredentials c;
  const bool ok = http::basic_credentials(req, c);
  if (ok) {
    user = c.decoded.substr(0, c.colon);
    password = c.decoded.substr(c.colon + 1);
  }
  OPENSSL_cleanse(c.decoded.data(), c.decoded.size());
  return ok;
}

int set_realm(http::Exchange& ex, const std::string& realm) {
  ex.response.remove("WWW-Authenticate");
  ex.response.add("WWW-Authenticate", "Basic realm=\"" + realm + "\"");
  return 401;
}

// The hash on the user's line: lines are "user:hash[:comment]"; '#'
// starts a comment line, as nginx reads them.
std::optional<std::string> find_hash(std::string_view file, std::string_view user) {
  while (!file.empty()) {
    size_t eol = file.find('\n');
    std::string_view line = file.substr(0, eol);
    file = eol == std::string_view::npos ? std::string_view() : file.substr(eol + 1);
    if (line.empty() || line[0] == '#' || line[0] == '\r') continue;
    if (line.size() <= user.size() || line.substr(0, user.size()) != user || line[user.size()] != ':') continue;
    std::string_view hash = line.substr(user.size() + 1);
    size_t end = hash.find_first_of(":\r");
    return std::string(hash.substr(0, end));
  }
  return std::nullopt;
}

// Verified (user, hash, SHA-256 of the password), shared by every worker.
std::mutex remembered_mu;
std::unordered_set<std::string>& remembered() {
  static auto* s = new std::unordered_set<std::string>;
  return *s;
}

std::string remember_key(const std::string& user, const std::string& hash, const std::string& password) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(password.data(), password.size(), digest, &len, EVP_sha256(), nullptr);
  std::string key = user;
  key.push_back('\0');
  key.append(hash);
  key.push_back('\0');
  key.append(reinterpret_cast<const char*>(digest), len);
  return key;
}

bool read_file(const std::string& path, std::string& out, int& err) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    err = errno;
    return false;
  }
  char buf[8192];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    out.append(buf, size_t(n));
    if (out.size() > kMaxFileSize) {
      err = EFBIG;
      ::close(fd);
      return false;
    }
  }
  ::close(fd);
  return true;
}

// What the hash check found, turned into the request's answer.
int verdict(http::Exchange& ex, PasswordCheck check, const std::string& why, const std::string& user,
            const std::string& realm, std::string key) {
  if (check == PasswordCheck::error) {
    TORII_LOG_EX(ex, error, "%s for user \"%s\"%s", why.empty() ? "unsupported password hash" : why.c_str(), user.c_str(),
              http::log_context(ex).c_str());
    return 500;
  }
  if (check == PasswordCheck::mismatch) {
    TORII_LOG_EX(ex, error, "user \"%s\": password mismatch%s", user.c_str(), http::log_context(ex).c_str());
    return set_realm(ex, realm);
  }
  std::lock_guard lock(remembered_mu);
  if (remembered().size() >= kMaxRemembered) remembered().clear();
  remembered().insert(std::move(key));
  return 0;
}

// libcrypt's "$" schemes cost from a millisecond (MD5-crypt) to hundreds
// (bcrypt at cost 10: about 220 ms on these machines), as does $apr1$;
// {PLAIN}, {SHA}, {SSHA} and DES are microseconds and stay on the loop.
bool slow_hash(const std::string& hash) { return !hash.empty() && hash[0] == '$'; }

struct Verification {
  std::string user, password, hash, key, realm;
};

// The request waits here while a pool thread checks the hash; a client
// that goes away drops it, and the result then finds `alive` expired.
struct SlowCheckState : http::Exchange::HandlerState {
  std::shared_ptr<char> alive = std::make_shared<char>();
};

void start_slow_check(http::Exchange& ex, core::EventLoop& loop, Verification v, int refused) {
  if (ex.handler_state) {
    // A handler that ran before an internal redirect: freed at the turn's end.
    std::shared_ptr<http::Exchange::HandlerState> old = std::move(ex.handler_state);
    loop.defer([old] {});
  }
  auto state = std::make_unique<SlowCheckState>();
  std::weak_ptr<char> alive = state->alive;
  ex.handler_state = std::move(state);
  struct Outcome {
    PasswordCheck check = PasswordCheck::error;
    std::string why;
  };
  auto job = std::make_shared<Verification>(std::move(v));
  auto outcome = std::make_shared<Outcome>();
  core::BlockingPool::process().run(
      loop,
      [job, outcome] {
        outcome->check = check_password(job->password, job->hash, &outcome->why);
        OPENSSL_cleanse(job->password.data(), job->password.size());
      },
      [&ex, &loop, alive, job, outcome, refused] {
        if (alive.expired()) return;  // the request is gone
        // The state lives to the end of the turn: the request moves on and
        // may give its handler state to the proxy.
        std::shared_ptr<http::Exchange::HandlerState> self = std::move(ex.handler_state);
        loop.defer([self] {});
        int code = verdict(ex, outcome->check, outcome->why, job->user, job->realm, std::move(job->key));
        access::continue_after_basic(ex, code, refused);
      });
}

}  // namespace

int check_basic(http::Exchange& ex, int refused) {
  const config::LimitsSettings& ls = ex.settings().limits;
  std::string realm = http::render(ls.auth_basic_realm, ex);
  if (realm == "off") return 0;
  std::string user, password;
  if (!basic_credentials(ex.req, user, password)) {
    TORII_LOG_EX(ex, info, "no user/password was provided for basic authentication%s", http::log_context(ex).c_str());
    return set_realm(ex, realm);
  }
  std::string path = http::render(ls.auth_basic_user_file, ex);
  std::string file;
  int err = 0;
  if (!read_file(path, file, err)) {
    if (err == ENOENT) {
      TORII_LOG_EX(ex, error, "open() \"%s\" failed (%d: %s)%s", path.c_str(), err, strerror(err), http::log_context(ex).c_str());
      return 403;
    }
    TORII_LOG_EX(ex, crit, "open() \"%s\" failed (%d: %s)%s", path.c_str(), err, strerror(err), http::log_context(ex).c_str());
    return 500;
  }
  auto hash = find_hash(file, user);
  OPENSSL_cleanse(file.data(), file.size());
  if (!hash) {
    TORII_LOG_EX(ex, error, "user \"%s\" was not found in \"%s\"%s", user.c_str(), path.c_str(), http::log_context(ex).c_str());
    return set_realm(ex, realm);
  }
  std::string key = remember_key(user, *hash, password);
  {
    std::lock_guard lock(remembered_mu);
    if (remembered().count(key)) return 0;
  }
  core::EventLoop* loop = ex.services().loop;
  if (loop && slow_hash(*hash)) {
    start_slow_check(ex, *loop, Verification{std::move(user), std::move(password), std::move(*hash), std::move(key),
                                             std::move(realm)},
                     refused);
    return kBasicPending;
  }
  std::string why;
  PasswordCheck check = check_password(password, *hash, &why);
  OPENSSL_cleanse(password.data(), password.size());
  return verdict(ex, check, why, user, realm, std::move(key));
}

}  // namespace torii::auth
