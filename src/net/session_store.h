// The sessions of an `ssl_session_cache shared:NAME:SIZE`, outside
// OpenSSL: one store per NAME for the life of the process, shared by every
// worker and every SSL_CTX that names it. A reload builds new contexts; the
// store, like nginx's shared zone, stays, so clients resume across it.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace torii::net {

class SessionStore {
 public:
  // The store called `name`, made on first use; `capacity` (sessions) is
  // taken from the first caller, as a shared zone keeps its size.
  static std::shared_ptr<SessionStore> named(const std::string& name, size_t capacity);

  explicit SessionStore(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  // Makes `ctx` keep its server sessions here instead of its own cache.
  void attach(SSL_CTX* ctx);

  size_t size() const;

  // A session by id (DER-encoded), until `expires` (unix seconds); a full
  // store drops its oldest. get() returns "" for unknown or expired ids.
  void put(std::string id, std::string der, int64_t expires);
  std::string get(const std::string& id);
  void erase(const std::string& id);

 private:
  struct Entry {
    std::string der;  // i2d_SSL_SESSION
    int64_t expires;  // unix seconds
    std::list<std::string>::iterator age;
  };

  static int on_new(SSL* ssl, SSL_SESSION* session);
  static SSL_SESSION* on_get(SSL* ssl, const unsigned char* id, int len, int* copy);
  static void on_remove(SSL_CTX* ctx, SSL_SESSION* session);
  static SessionStore* of(SSL_CTX* ctx);

  const size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> sessions_;
  std::list<std::string> oldest_first_;
};

}  // namespace torii::net
