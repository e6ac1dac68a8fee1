#include "net/session_store.h"

#include <ctime>
#include <map>

namespace torii::net {

namespace {

int store_index() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

std::string session_id(const SSL_SESSION* s) {
  unsigned int len = 0;
  const unsigned char* id = SSL_SESSION_get_id(s, &len);
  return std::string(reinterpret_cast<const char*>(id), len);
}

}  // namespace

std::shared_ptr<SessionStore> SessionStore::named(const std::string& name, size_t capacity) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<SessionStore>> stores;
  std::lock_guard lock(mu);
  auto& store = stores[name];
  if (!store) store = std::make_shared<SessionStore>(capacity);
  return store;
}

void SessionStore::attach(SSL_CTX* ctx) {
  SSL_CTX_set_ex_data(ctx, store_index(), this);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER | SSL_SESS_CACHE_NO_INTERNAL);
  SSL_CTX_sess_set_new_cb(ctx, &SessionStore::on_new);
  SSL_CTX_sess_set_get_cb(ctx, &SessionStore::on_get);
  SSL_CTX_sess_set_remove_cb(ctx, &SessionStore::on_remove);
}

size_t SessionStore::size() const {
  std::lock_guard lock(mu_);
  return sessions_.size();
}

SessionStore* SessionStore::of(SSL_CTX* ctx) { return static_cast<SessionStore*>(SSL_CTX_get_ex_data(ctx, store_index())); }

int SessionStore::on_new(SSL* ssl, SSL_SESSION* session) {
  SessionStore* store = of(SSL_get_SSL_CTX(ssl));
  const int len = i2d_SSL_SESSION(session, nullptr);
  if (!store || len <= 0) return 0;
  std::string der(size_t(len), '\0');
  auto* p = reinterpret_cast<unsigned char*>(der.data());
  i2d_SSL_SESSION(session, &p);
  const int64_t expires = int64_t(SSL_SESSION_get_time(session)) + int64_t(SSL_SESSION_get_timeout(session));
  store->put(session_id(session), std::move(der), expires);
  return 0;  // we keep a copy, not OpenSSL's reference
}

SSL_SESSION* SessionStore::on_get(SSL* ssl, const unsigned char* id, int len, int* copy) {
  *copy = 0;  // the session we return is the caller's
  SessionStore* store = of(SSL_get_SSL_CTX(ssl));
  if (!store || len <= 0) return nullptr;
  const std::string der = store->get(std::string(reinterpret_cast<const char*>(id), size_t(len)));
  if (der.empty()) return nullptr;
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  return d2i_SSL_SESSION(nullptr, &p, long(der.size()));
}

void SessionStore::on_remove(SSL_CTX* ctx, SSL_SESSION* session) {
  if (SessionStore* store = of(ctx)) store->erase(session_id(session));
}

void SessionStore::put(std::string id, std::string der, int64_t expires) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(id);
  if (it != sessions_.end()) {
    oldest_first_.erase(it->second.age);
    sessions_.erase(it);
  }
  while (sessions_.size() >= capacity_ && !oldest_first_.empty()) {  // full: the oldest goes
    sessions_.erase(oldest_first_.front());
    oldest_first_.pop_front();
  }
  oldest_first_.push_back(id);
  auto age = std::prev(oldest_first_.end());
  sessions_.emplace(std::move(id), Entry{std::move(der), expires, age});
}

std::string SessionStore::get(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return {};
  if (it->second.expires <= int64_t(std::time(nullptr))) {
    oldest_first_.erase(it->second.age);
    sessions_.erase(it);
    return {};
  }
  return it->second.der;
}

void SessionStore::erase(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  oldest_first_.erase(it->second.age);
  sessions_.erase(it);
}

}  // namespace torii::net
