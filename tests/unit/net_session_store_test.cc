#include "net/session_store.h"

#include <gtest/gtest.h>

#include <ctime>

namespace torii::net {
namespace {

const int64_t kLater = int64_t(std::time(nullptr)) + 600;

TEST(SessionStore, KeepsAtMostCapacityOldestGoesFirst) {
  SessionStore store(2);
  store.put("a", "A", kLater);
  store.put("b", "B", kLater);
  store.put("c", "C", kLater);
  EXPECT_EQ(store.size(), 2u);
  EXPECT_EQ(store.get("a"), "");
  EXPECT_EQ(store.get("b"), "B");
  EXPECT_EQ(store.get("c"), "C");
}

TEST(SessionStore, ExpiredSessionsAreNotReturned) {
  SessionStore store(4);
  store.put("old", "O", int64_t(std::time(nullptr)) - 1);
  EXPECT_EQ(store.get("old"), "");
  EXPECT_EQ(store.size(), 0u);
}

TEST(SessionStore, ReplacingAndErasing) {
  SessionStore store(2);
  store.put("a", "1", kLater);
  store.put("a", "2", kLater);
  EXPECT_EQ(store.size(), 1u);
  EXPECT_EQ(store.get("a"), "2");
  store.erase("a");
  EXPECT_EQ(store.get("a"), "");
}

TEST(SessionStore, SameNameSameStore) {
  auto one = SessionStore::named("unit-test-zone", 10);
  auto two = SessionStore::named("unit-test-zone", 99);
  EXPECT_EQ(one, two);
  EXPECT_NE(one, SessionStore::named("unit-test-other", 10));
}

}  // namespace
}  // namespace torii::net
