#include "modules/compression/encoded_cache.h"

namespace torii::compression {

EncodedCache& EncodedCache::local() {
  thread_local EncodedCache cache;
  return cache;
}

std::string EncodedCache::make_key(const std::string& path, Coding coding, int level) {
  std::string key;
  key.reserve(path.size() + 8);
  key.push_back(char('0' + int(coding)));
  key.append(std::to_string(level));
  key.push_back(':');
  key.append(path);
  return key;
}

std::shared_ptr<const std::string> EncodedCache::find(const std::string& path, Coding coding, int level,
                                                      const http::OpenFile& file) {
  auto it = index_.find(make_key(path, coding, level));
  if (it == index_.end()) return nullptr;
  auto e = it->second;
  if (e->inode != file.inode || e->mtime != file.mtime || e->size != file.size) {
    erase(e);  // the file changed: this encoding is of an older version
    return nullptr;
  }
  lru_.splice(lru_.begin(), lru_, e);
  return e->bytes;
}

void EncodedCache::store(const std::string& path, Coding coding, int level, const http::OpenFile& file,
                         std::shared_ptr<const std::string> bytes) {
  if (!bytes || bytes->size() > kBudget / 4) return;
  std::string key = make_key(path, coding, level);
  if (auto it = index_.find(key); it != index_.end()) erase(it->second);
  while (!lru_.empty() && bytes_ + bytes->size() > kBudget) erase(std::prev(lru_.end()));
  bytes_ += bytes->size();
  lru_.push_front(Entry{std::move(key), file.inode, file.mtime, file.size, std::move(bytes)});
  index_.emplace(lru_.front().key, lru_.begin());
}

void EncodedCache::erase(List::iterator it) {
  bytes_ -= it->bytes->size();
  index_.erase(it->key);
  lru_.erase(it);
}

void EncodedCache::clear() {
  index_.clear();
  lru_.clear();
  bytes_ = 0;
}

}  // namespace torii::compression
