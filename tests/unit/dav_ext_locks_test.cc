// The WebDAV extension's lock reading and keeping (modules/dav_ext): the
// If header's lists and tags, Lock-Token, and which locks constrain which
// URIs at each reach.
#include <gtest/gtest.h>

#include "core/xml_escape.h"
#include "modules/dav_ext/lock_headers.h"
#include "modules/dav_ext/lock_table.h"
#include "modules/dav_ext/propfind_body.h"

namespace torii::dav_ext {
namespace {

const Origin kOrigin{"example.org", false};

TEST(DavExtHeaders, LockTokenValue) {
  EXPECT_EQ(lock_token_value("<urn:deadBEEF>"), 0xdeadbeefu);
  EXPECT_EQ(lock_token_value("<urn:deadbeef>junk"), 0xdeadbeefu);
  EXPECT_EQ(lock_token_value("<urn:deadbee>"), 0u);
  EXPECT_EQ(lock_token_value("urn:deadbeef"), 0u);
  EXPECT_EQ(lock_token_value("<urn:deadbeefa>"), 0u);
  EXPECT_EQ(lock_token_value(""), 0u);
}

TEST(DavExtHeaders, IfListsAndTags) {
  EXPECT_EQ(if_header_token("(<urn:0000000a>)", "/f", "/f", kOrigin), 10u);
  // An untagged list is the request URI's: it covers that URI, or below it
  // when the URI is a folder.
  EXPECT_EQ(if_header_token("(<urn:0000000a>)", "/f", "/d/x", kOrigin), 0u);
  EXPECT_EQ(if_header_token("(<urn:0000000a>)", "/d/", "/d/x", kOrigin), 10u);
  EXPECT_EQ(if_header_token("</d/> (<urn:0000000b>)", "/f", "/d/x", kOrigin), 11u);
  EXPECT_EQ(if_header_token("</d> (<urn:0000000b>)", "/f", "/d/x", kOrigin), 0u);
  EXPECT_EQ(if_header_token("<http://example.org:8080/d/x> (<urn:0000000c>)", "/f", "/d/x", kOrigin), 12u);
  EXPECT_EQ(if_header_token("<https://example.org/d/x> (<urn:0000000c>)", "/f", "/d/x", kOrigin), 0u);
  EXPECT_EQ(if_header_token("<http://other/d/x> (<urn:0000000c>)", "/f", "/d/x", kOrigin), 0u);
  EXPECT_EQ(if_header_token("</a> (<urn:00000001>) </f> (<urn:00000002>)", "/x", "/f", kOrigin), 2u);
  EXPECT_EQ(if_header_token("(Not <urn:00000001> <urn:00000002>)", "/f", "/f", kOrigin), 2u);
  EXPECT_EQ(if_header_token("([\"e t\"] <urn:00000003>)", "/f", "/f", kOrigin), 3u);
  EXPECT_EQ(if_header_token("([\"etag\"] <urn:00000003>)", "/f", "/f", kOrigin), 3u);
  EXPECT_EQ(if_header_token("<urn:00000001>", "/f", "/f", kOrigin), 0u);  // not a list
  EXPECT_EQ(if_header_token("(<urn:0000", "/f", "/f", kOrigin), 0u);
  EXPECT_EQ(if_header_token("<", "/f", "/f", kOrigin), 0u);
}

TEST(DavExtHeaders, TokensRoundTrip) {
  std::string s;
  append_token(s, 0x0123abcdu, true);
  EXPECT_EQ(s, "<urn:0123abcd>");
  EXPECT_EQ(lock_token_value(s), 0x0123abcdu);
}

TEST(DavExtLocks, ReachOfALock) {
  LockTable t("t", 1 << 20);
  EXPECT_EQ(t.lock("/d/", false, 0, 7, 60, 1000).status, 0);
  EXPECT_EQ(t.verify("/d/", 0, false, 1000), 423);
  EXPECT_EQ(t.verify("/d/a", 0, false, 1000), 423);
  EXPECT_EQ(t.verify("/d/s/", 0, false, 1000), 423);
  EXPECT_EQ(t.verify("/d/s/a", 0, false, 1000), 0);  // depth 0: direct members only
  EXPECT_EQ(t.verify("/d/a", 8, false, 1000), 412);
  EXPECT_EQ(t.verify("/d/a", 7, false, 1000), 0);
  EXPECT_EQ(t.verify("/dx", 0, false, 1000), 0);
  // A lock on the folder's member conflicts with one on the folder, and
  // the other way round.
  EXPECT_EQ(t.lock("/d/a", true, 0, 9, 60, 1000).status, 423);
  EXPECT_EQ(t.lock("/", true, 0, 9, 60, 1000).status, 423);
  EXPECT_EQ(t.lock("/", false, 0, 9, 60, 1000).status, 423);  // depth 0 on "/" reaches "/d/", a member
}

TEST(DavExtLocks, ExpiryRenewalAndRemoval) {
  LockTable t("t", 1 << 20);
  EXPECT_EQ(t.lock("/f", true, 0, 5, 10, 100).token, 5u);
  const auto renewed = t.lock("/f", true, 5, 6, 10, 105);
  EXPECT_TRUE(renewed.refreshed);
  EXPECT_EQ(renewed.token, 5u);
  EXPECT_EQ(t.find("/f", Reach::none, 115)->expire, 115);
  EXPECT_FALSE(t.find("/f", Reach::none, 116));
  EXPECT_EQ(t.lock("/g", true, 0, 5, 10, 200).status, 0);
  t.unlock("/g", 4, 200);
  EXPECT_TRUE(t.find("/g", Reach::none, 200));
  t.unlock("/g", 5, 200);
  EXPECT_FALSE(t.find("/g", Reach::none, 200));
  EXPECT_EQ(t.lock("/h", true, 0, 5, 10, 200).status, 0);
  EXPECT_EQ(t.verify("/h", 5, true, 200), 0);  // DELETE of the root drops it
  EXPECT_FALSE(t.find("/h", Reach::none, 200));
}

TEST(DavExtLocks, ZoneFills) {
  LockTable t("small", 8 * 4096);
  int granted = 0;
  while (t.lock("/f" + std::to_string(granted), true, 0, 1, 60, 0).status == 0) ++granted;
  EXPECT_GT(granted, 100);
  EXPECT_LT(granted, 1000);
}

TEST(DavExtPropfind, Bodies) {
  EXPECT_EQ(parse_propfind_body(""), all_properties);
  EXPECT_EQ(parse_propfind_body("<D:propfind xmlns:D=\"DAV:\"><D:allprop/></D:propfind>"), all_properties);
  EXPECT_EQ(parse_propfind_body("<propfind xmlns=\"DAV:\"><propname/></propfind>"), names_only);
  EXPECT_EQ(parse_propfind_body("<propfind xmlns=\"DAV:\"><prop><displayname/><x xmlns=\"y\"/></prop></propfind>"),
            displayname);
  EXPECT_EQ(parse_propfind_body("<displayname/>"), 0);  // outside propfind/prop: nothing
  EXPECT_FALSE(parse_propfind_body("not xml"));
  EXPECT_FALSE(parse_propfind_body("<propfind>"));
}

TEST(XmlEscape, MarkupControlsAndBadUtf8) {
  std::string out;
  core::append_xml_escaped(out, "a<b>&\"c\" caf\xc3\xa9 \x01 \xff \xed\xa0\x80 \xf0\x9f\x99\x82\t");
  EXPECT_EQ(out, "a&lt;b&gt;&amp;&quot;c&quot; caf\xc3\xa9 \xef\xbf\xbd \xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd "
                 "\xf0\x9f\x99\x82\t");
}

}  // namespace
}  // namespace torii::dav_ext
