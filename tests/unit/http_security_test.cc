// The daemon's TLS certificate and Basic auth users as SIGHUP swaps them:
// what /metrics says of the certificate served, a certificate near its end
// warned about, one that is expired or not yet valid refused and the old one
// kept.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "app/http_security.h"
#include "support/daemon_process.h"
#include "support/log_capture.h"
#include "support/test_certificates.h"
#include "support/test_env.h"

namespace seatwatch::app {
namespace {

constexpr long kDay = 24 * 3600;
constexpr const char* kExpiry = "seatwatch_tls_certificate_expiry_timestamp_seconds";

class HttpSecurityTest : public ::testing::Test {
 protected:
  HttpSecurityTest() : dir_(testing::MakeTempDir("seatwatch-http-security")) {}

  // [http] serving dir/name.crt, as LoadConfig would have read it.
  config::HttpConfig Serving(const std::string& name) {
    config::HttpConfig http;
    http.tls_cert_file = dir_ + "/" + name + ".crt";
    http.tls_key_file = dir_ + "/" + name + ".key";
    http.tls_cert_pem = testing::ReadFile(http.tls_cert_file);
    http.tls_key_pem = testing::ReadFile(http.tls_key_file);
    return http;
  }

  // The expiry gauge as /metrics would show it; NaN when absent.
  static double Expiry(const HttpSecurity& security) {
    auto text = security.MetricsSource()();
    return text ? testing::Sample(*text, kExpiry) : NAN;
  }

  std::string dir_;
};

TEST_F(HttpSecurityTest, TheServedCertificatesExpiryIsExportedAndFollowsARotation) {
  testing::WriteCertificate(dir_, "first", -kDay, 90 * kDay, 1);
  testing::WriteCertificate(dir_, "second", -kDay, 180 * kDay, 2);
  HttpSecurity security(Serving("first"));
  auto text = security.MetricsSource()();
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("# TYPE seatwatch_tls_certificate_expiry_timestamp_seconds gauge\n"), std::string::npos)
      << *text;
  double now = static_cast<double>(http::UnixNowSeconds());
  EXPECT_NEAR(Expiry(security), now + 90 * kDay, 60);

  security.Reload(Serving("second"));
  EXPECT_NEAR(Expiry(security), now + 180 * kDay, 60);
}

TEST_F(HttpSecurityTest, NoSeriesWithoutTls) {
  HttpSecurity security(config::HttpConfig{});
  EXPECT_EQ(security.MetricsSource()(), nullptr);
}

TEST_F(HttpSecurityTest, ACertificateThatExpiresWithinFourteenDaysIsServedWithAWarning) {
  testing::WriteCertificate(dir_, "soon", -kDay, 5 * kDay + 600, 1);
  testing::WriteCertificate(dir_, "later", -kDay, 30 * kDay, 2);
  testing::LogCapture log;
  HttpSecurity security(Serving("later"));
  EXPECT_EQ(log.Text().find("expires soon"), std::string::npos) << log.Text();
  security.Reload(Serving("soon"));
  std::string text = log.Text();
  EXPECT_NE(text.find("level=warn msg=\"TLS certificate expires soon: renew it, then send SIGHUP\" cert=" + dir_ +
                      "/soon.crt serial=01 not_after=20"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("expires_in=\"5 days\""), std::string::npos) << text;
  EXPECT_NEAR(Expiry(security), static_cast<double>(http::UnixNowSeconds()) + 5 * kDay + 600, 60);
}

TEST_F(HttpSecurityTest, AnExpiredOrNotYetValidCertificateIsRefusedOnReloadAndTheOldOneKept) {
  testing::WriteCertificate(dir_, "good", -kDay, 90 * kDay, 1);
  testing::WriteCertificate(dir_, "expired", -90 * kDay, -kDay, 2);
  testing::WriteCertificate(dir_, "early", kDay, 90 * kDay, 3);
  HttpSecurity security(Serving("good"));
  double served = Expiry(security);
  testing::LogCapture log;
  security.Reload(Serving("expired"));
  security.Reload(Serving("early"));
  EXPECT_EQ(Expiry(security), served);
  std::string text = log.Text();
  EXPECT_EQ(text.find("TLS certificate reloaded"), std::string::npos) << text;
  EXPECT_NE(text.find("level=error msg=\"TLS certificate reload failed; keeping the running certificate\" cert=" +
                      dir_ + "/expired.crt error=\"" + dir_ + "/expired.crt expired at 20"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("/early.crt is not valid before 20"), std::string::npos) << text;
}

TEST_F(HttpSecurityTest, AnExpiredCertificateIsRefusedAtStart) {
  testing::WriteCertificate(dir_, "expired", -90 * kDay, -kDay, 2);
  try {
    HttpSecurity security(Serving("expired"));
    FAIL() << "an expired certificate was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).find(dir_ + "/expired.crt expired at 20"), 0u) << e.what();
  }
}

}  // namespace
}  // namespace seatwatch::app
