#include "modules/geoip/database.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include <cstdio>
#include <thread>
#include <vector>

#include "config/geoip_config.h"
#include "stream/variables.h"

namespace torii::geoip {
namespace {

constexpr const char* kV4 = "/usr/share/GeoIP/GeoIP.dat";
constexpr const char* kV6 = "/usr/share/GeoIP/GeoIPv6.dat";

bool have(const char* path) {
  struct stat st;
  return stat(path, &st) == 0;
}

net::IpAddress ip(const char* text) {
  net::IpAddress a;
  EXPECT_TRUE(net::parse_ip(text, a)) << text;
  return a;
}

std::string lookup(const Database& db, Field f, const net::IpAddress& a) {
  std::string out;
  if (!db.append(f, a, out)) return "(none)";
  return out;
}

TEST(GeoIpDatabase, CountryLookupsInTheIpv4Database) {
  if (!have(kV4)) GTEST_SKIP() << "needs Debian's geoip-database";
  auto db = Database::open(Kind::country, kV4, "");
  ASSERT_TRUE(db) << db.error();
  EXPECT_FALSE((*db)->v6());
  EXPECT_EQ(lookup(**db, Field::country_code, ip("8.8.8.8")), "US");
  EXPECT_EQ(lookup(**db, Field::country_code3, ip("8.8.8.8")), "USA");
  EXPECT_EQ(lookup(**db, Field::country_name, ip("1.1.1.1")), "Australia");
  EXPECT_EQ(lookup(**db, Field::country_code, ip("127.0.0.1")), "(none)");
  // ::ffff:a.b.c.d is a.b.c.d; another IPv6 address is 255.255.255.255.
  EXPECT_EQ(lookup(**db, Field::country_code, ip("::ffff:193.0.6.139")), "NL");
  EXPECT_EQ(lookup(**db, Field::country_code, ip("2001:4860:4860::8888")), "(none)");
  EXPECT_EQ(lookup(**db, Field::country_code, net::IpAddress{}), "(none)");
  // The other databases' fields have no value here.
  EXPECT_EQ(lookup(**db, Field::org, ip("8.8.8.8")), "(none)");
  EXPECT_EQ(lookup(**db, Field::city, ip("8.8.8.8")), "(none)");
  EXPECT_EQ(lookup(**db, Field::latitude, ip("8.8.8.8")), "(none)");
}

TEST(GeoIpDatabase, CountryLookupsInTheIpv6Database) {
  if (!have(kV6)) GTEST_SKIP() << "needs Debian's geoip-database";
  auto db = Database::open(Kind::country, kV6, "");
  ASSERT_TRUE(db) << db.error();
  EXPECT_TRUE((*db)->v6());
  EXPECT_EQ(lookup(**db, Field::country_code, ip("2001:4860:4860::8888")), "US");
  EXPECT_EQ(lookup(**db, Field::country_name, ip("2a00:1450:4001:80b::200e")), "Germany");
  EXPECT_EQ(lookup(**db, Field::country_code, ip("193.0.6.139")), "NL");  // as ::ffff:193.0.6.139
  EXPECT_EQ(lookup(**db, Field::country_code, ip("::1")), "(none)");
}

TEST(GeoIpDatabase, Utf8Names) {
  if (!have(kV4)) GTEST_SKIP() << "needs Debian's geoip-database";
  auto plain = Database::open(Kind::country, kV4, "");
  auto utf8 = Database::open(Kind::country, kV4, "utf8");
  ASSERT_TRUE(plain && utf8);
  EXPECT_EQ(lookup(**plain, Field::country_name, ip("190.185.37.205")), "Curacao");
  EXPECT_EQ(lookup(**utf8, Field::country_name, ip("190.185.37.205")), "Cura\xc3\xa7" "ao");
}

TEST(GeoIpDatabase, LoadErrorsInNginxWords) {
  auto missing = Database::open(Kind::country, "/nonexistent/GeoIP.dat", "");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error(), "GeoIP_open(\"/nonexistent/GeoIP.dat\") failed");
  if (!have(kV4)) GTEST_SKIP() << "needs Debian's geoip-database";
  auto city = Database::open(Kind::city, kV4, "");
  ASSERT_FALSE(city);
  EXPECT_EQ(city.error(), "invalid GeoIP City database \"/usr/share/GeoIP/GeoIP.dat\" type:1");
  auto org = Database::open(Kind::org, kV4, "");
  ASSERT_FALSE(org);
  EXPECT_EQ(org.error(), "invalid GeoIP database \"/usr/share/GeoIP/GeoIP.dat\" type:1");
  auto param = Database::open(Kind::country, kV4, "latin1");
  ASSERT_FALSE(param);
  EXPECT_EQ(param.error(), "invalid parameter \"latin1\"");
}

TEST(GeoIpDatabase, LookupsFromManyThreadsAgree) {
  if (!have(kV4)) GTEST_SKIP() << "needs Debian's geoip-database";
  auto db = Database::open(Kind::country, kV4, "");
  ASSERT_TRUE(db);
  const Database& d = **db;
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const net::IpAddress us = ip("8.8.8.8"), au = ip("1.1.1.1");
      for (int i = 0; i < 20000; ++i) {
        const bool even = (i + t) % 2 == 0;
        if (lookup(d, Field::country_code, even ? us : au) != (even ? "US" : "AU")) ++wrong[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int w : wrong) EXPECT_EQ(w, 0);
}

TEST(GeoIpDatabase, FixedFourDigitsAsNginxPrintsThem) {
  auto fmt = [](double v) {
    std::string s;
    append_fixed4(v, s);
    return s;
  };
  EXPECT_EQ(fmt(0), "0.0000");
  EXPECT_EQ(fmt(37.751), "37.7510");
  EXPECT_EQ(fmt(-97.822), "-97.8220");
  EXPECT_EQ(fmt(1.23456), "1.2346");
  EXPECT_EQ(fmt(9.99996), "10.0000");
  EXPECT_EQ(fmt(-0.00001), "-0.0000");
  EXPECT_EQ(fmt(static_cast<float>(52.5167f)), "52.5167");
}

TEST(GeoIpStream, VariablesReadTheStreamBlocksDatabase) {
  if (!have(kV4)) GTEST_SKIP() << "needs Debian's geoip-database";
  auto db = Database::open(Kind::country, kV4, "");
  ASSERT_TRUE(db);
  config::GeoIpConfig g;
  g.country = *db;
  stream::VariableNames names;
  auto t = stream::compile_template("$geoip_country_code/$geoip_country_name/$geoip_city", names);
  ASSERT_TRUE(t) << t.error();
  stream::Facts f;
  auto& sin = reinterpret_cast<sockaddr_in&>(f.peer);
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(0x08080808);  // 8.8.8.8
  std::string out;
  stream::render(*t, f, out);
  EXPECT_EQ(out, "//");  // no databases in the session
  f.geoip = &g;
  out.clear();
  stream::render(*t, f, out);
  EXPECT_EQ(out, "US/United States/");
  EXPECT_TRUE(stream::is_builtin_variable("geoip_org"));
}

}  // namespace
}  // namespace torii::geoip
