#include "upstream/live_group.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "upstream/group_state.h"
#include "upstream/peer_stats.h"

namespace torii::upstream {
namespace {

std::shared_ptr<config::UpstreamGroupConfig> loaded_group(std::string state_file = "") {
  auto g = std::make_shared<config::UpstreamGroupConfig>();
  g->name = "app";
  g->state_file = std::move(state_file);
  config::UpstreamServer s;
  s.name = "127.0.0.1:8081";
  g->servers.push_back(s);
  attach_live_group(*g);
  return g;
}

ServerChange server(std::string addr) {
  ServerChange c;
  c.server = std::move(addr);
  return c;
}

TEST(LiveGroup, EachChangeIsANewSnapshotWithANewVersion) {
  auto g = loaded_group();
  LiveGroup& live = *g->live;
  EXPECT_EQ(live.version(), 0u);
  auto first = live.snapshot();
  EXPECT_EQ(first->live, nullptr);  // no cycle back to the LiveGroup

  auto added = live.add(server("127.0.0.1:8082"));
  ASSERT_FALSE(added.error);
  EXPECT_EQ(added.server.id, 1u);
  EXPECT_EQ(live.version(), 1u);
  EXPECT_EQ(first->servers.size(), 1u);  // what requests in flight hold is untouched
  EXPECT_EQ(live.snapshot()->servers.size(), 2u);

  ServerChange drain;
  drain.drain = true;
  drain.weight = 3;
  auto patched = live.patch(1, drain);
  ASSERT_FALSE(patched.error);
  EXPECT_TRUE(patched.server.drain);
  EXPECT_EQ(patched.server.weight, 3u);
  EXPECT_EQ(patched.server.name, "127.0.0.1:8082");

  EXPECT_FALSE(live.remove(0).error);
  EXPECT_EQ(live.snapshot()->servers.size(), 1u);
  EXPECT_EQ(live.snapshot()->servers[0].id, 1u);
  // Ids are never given twice.
  EXPECT_EQ(live.add(server("127.0.0.1:8083")).server.id, 2u);
}

TEST(LiveGroup, RefusesWhatTheConfigWouldRefuse) {
  auto g = loaded_group();
  LiveGroup& live = *g->live;
  EXPECT_EQ(live.add(ServerChange{}).error->status, 400);
  EXPECT_EQ(live.add(server("127.0.0.1:99999")).error->status, 400);
  EXPECT_EQ(live.add(server("unix:")).error->status, 400);
  ServerChange w;
  w.weight = 0;
  EXPECT_EQ(live.patch(0, w).error->status, 400);
  EXPECT_EQ(live.patch(9, ServerChange{}).error->status, 404);
  EXPECT_EQ(live.remove(9).error->status, 404);
  EXPECT_EQ(live.version(), 0u);
}

TEST(LiveGroup, DrainedAndDownServersAreNotPicked) {
  auto g = loaded_group();
  g->live->add(server("127.0.0.1:8082"));
  ServerChange drain;
  drain.drain = true;
  g->live->patch(0, drain);
  auto snap = g->live->snapshot();
  GroupState st(*snap);
  std::vector<uint8_t> tried(st.size(), 0);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(st.pick({}, tried, 0), 1);
  // Counters follow the server's id across snapshots.
  st.acquire(1);
  EXPECT_EQ(g->stats->at(1).active.load(), 1);
  EXPECT_EQ(g->stats->at(1).requests.load(), 1u);
  st.responded(1, 204);
  st.release(1);
  EXPECT_EQ(g->stats->at(1).active.load(), 0);
  EXPECT_EQ(g->stats->at(1).responses[1].load(), 1u);
}

TEST(LiveGroup, WritesTheStateFileBeforeAChangeApplies) {
  char dir[] = "/tmp/torii-live-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/app.state";
  auto g = loaded_group(path);
  ServerChange c = server("127.0.0.1:8082");
  c.backup = true;
  c.fail_timeout_ms = 1500;
  ASSERT_FALSE(g->live->add(c).error);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "server 127.0.0.1:8081 weight=1 max_fails=1 fail_timeout=10000ms max_conns=0;\n"
            "server 127.0.0.1:8082 weight=1 max_fails=1 fail_timeout=1500ms max_conns=0 backup;\n");
  // A state file that cannot be written: nothing changes.
  ASSERT_EQ(::unlink(path.c_str()), 0);
  ASSERT_EQ(::rmdir(dir), 0);
  const uint64_t v = g->live->version();
  auto failed = g->live->add(server("127.0.0.1:8084"));
  ASSERT_TRUE(failed.error);
  EXPECT_EQ(failed.error->status, 500);
  EXPECT_EQ(g->live->version(), v);
}

// A group with one `server app.internal:8080 resolve` line and no server yet.
std::shared_ptr<config::UpstreamGroupConfig> resolving_group(std::string name = "app.internal", uint16_t port = 8080,
                                                             unsigned weight = 3) {
  auto g = std::make_shared<config::UpstreamGroupConfig>();
  g->name = "app";
  config::ResolveTemplate t;
  t.name = name;
  t.written = name + ":" + std::to_string(port);
  t.port = port;
  t.proto.weight = weight;
  g->resolves.push_back(t);
  attach_live_group(*g);
  return g;
}

dns::Address ipv4(const char* text) {
  dns::Address a;
  auto* sin = reinterpret_cast<sockaddr_in*>(&a.addr);
  sin->sin_family = AF_INET;
  inet_pton(AF_INET, text, &sin->sin_addr);
  a.len = sizeof(sockaddr_in);
  return a;
}

std::vector<std::string> names(const config::UpstreamGroupConfig& g) {
  std::vector<std::string> out;
  for (const auto& s : g.servers) out.push_back(s.name + "#" + std::to_string(s.id));
  return out;
}

TEST(LiveGroup, ResolvedAddressesKeepTheirIdsAndOnlyChangesMakeVersions) {
  auto g = resolving_group();
  LiveGroup& live = *g->live;
  EXPECT_TRUE(g->servers.empty());
  ASSERT_TRUE(live.set_resolved(0, {ipv4("10.0.0.1"), ipv4("10.0.0.2")}));
  auto first = live.snapshot();
  EXPECT_EQ(names(*first), (std::vector<std::string>{"10.0.0.1:8080#0", "10.0.0.2:8080#1"}));
  EXPECT_EQ(first->servers[0].host, "app.internal:8080");
  EXPECT_EQ(first->servers[0].weight, 3u);  // the line's settings
  EXPECT_EQ(first->servers[0].resolve_index, 0);
  const uint64_t v = live.version();

  // The same addresses in another order: nothing to do.
  EXPECT_FALSE(live.set_resolved(0, {ipv4("10.0.0.2"), ipv4("10.0.0.1")}));
  EXPECT_EQ(live.version(), v);

  // One stays (same id), one goes, one comes (a new id); a duplicate in the
  // answer makes one server.
  ASSERT_TRUE(live.set_resolved(0, {ipv4("10.0.0.2"), ipv4("10.0.0.3"), ipv4("10.0.0.3")}));
  EXPECT_EQ(names(*live.snapshot()), (std::vector<std::string>{"10.0.0.2:8080#1", "10.0.0.3:8080#2"}));
  EXPECT_EQ(first->servers.size(), 2u);  // requests in flight keep their list

  // A resolved server is not the API's to change.
  EXPECT_EQ(live.remove(1).error->code, "UpstreamServerImmutable");
  ServerChange down;
  down.down = true;
  EXPECT_EQ(live.patch(2, down).error->code, "UpstreamServerImmutable");

  // The name is gone: so are its servers.
  ASSERT_TRUE(live.set_resolved(0, {}));
  EXPECT_TRUE(live.snapshot()->servers.empty());
}

TEST(LiveGroup, AReloadedGroupAdoptsTheAddressesOfTheSameName) {
  auto old = resolving_group();
  ASSERT_TRUE(old->live->set_resolved(0, {ipv4("10.0.0.1"), ipv4("10.0.0.2")}));
  auto next = resolving_group("app.internal", 9090, 1);  // the new line's port and settings apply
  ASSERT_TRUE(next->live->adopt(*old->live->snapshot()));
  auto snap = next->live->snapshot();
  EXPECT_EQ(names(*snap), (std::vector<std::string>{"10.0.0.1:9090#0", "10.0.0.2:9090#1"}));
  EXPECT_EQ(snap->servers[1].weight, 1u);
  EXPECT_EQ(snap->servers[1].host, "app.internal:9090");
  // A name the old group did not have starts empty.
  auto other = resolving_group("other.internal");
  EXPECT_FALSE(other->live->adopt(*old->live->snapshot()));
}

}  // namespace
}  // namespace torii::upstream
