#include "net/certified_key.h"

#include <gtest/gtest.h>

namespace torii::net {
namespace {

TEST(DynamicCertificatesTest, RendersTheServerNameInBothSpellings) {
  EXPECT_EQ(DynamicCertificates::render("/c/$ssl_server_name.crt", "a.test"), "/c/a.test.crt");
  EXPECT_EQ(DynamicCertificates::render("/c/${ssl_server_name}_rsa.key", "a.test"), "/c/a.test_rsa.key");
  EXPECT_EQ(DynamicCertificates::render("$ssl_server_name/$ssl_server_name.pem", "b"), "b/b.pem");
  EXPECT_EQ(DynamicCertificates::render("/c/$ssl_server_name.crt", ""), "/c/.crt");
  EXPECT_EQ(DynamicCertificates::render("/c/plain.crt", "a"), "/c/plain.crt");
}

TEST(CertifiedKeyTest, MissingFilesAreNamedInTheError) {
  auto r = load_certified_key("/nonexistent/x.crt", "/nonexistent/x.key", nullptr);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("cannot load certificate \"/nonexistent/x.crt\""), std::string::npos) << r.error();
  auto d = load_certified_key("data:not a certificate", "data:", nullptr);
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().find("PEM_read_bio_X509_AUX() failed"), std::string::npos) << d.error();
}

}  // namespace
}  // namespace torii::net
