// [http] TLS and Basic auth keys: parsed strictly, errors as
// file:line:col: key: problem, files resolved against the config's folder
// and read (the key matched to the certificate, the certificate valid now)
// by LoadConfig.
#include <gtest/gtest.h>

#include <string>

#include "config/config_error.h"
#include "config/describe.h"
#include "config/load.h"
#include "config/parse.h"
#include "http/tls_validity.h"
#include "support/test_certificates.h"
#include "support/test_env.h"
#include "unit/config_text.h"

namespace seatwatch::config {
namespace {

constexpr const char* kHash = "$2y$04$23cokb6d.c4P5W9JRd2xeOGgm0ofo8iJI5gN4bRRLmtJkuZWn0fT6";

TEST(HttpTlsConfigTest, DefaultsAreOffAndProbesExempt) {
  Config config = ParseText("");
  EXPECT_FALSE(config.http.tls());
  EXPECT_TRUE(config.http.basic_auth_users.empty());
  EXPECT_TRUE(config.http.auth_exempt_probes);
  EXPECT_EQ(config.http.tls_min_version, HttpConfig::TlsVersion::kTls12);
}

TEST(HttpTlsConfigTest, FilesResolveAgainstTheConfigFolder) {
  Config config = ParseText(R"([http]
tls_cert_file = "tls/server.crt"
tls_key_file = "/abs/server.key"
tls_client_ca_file = "../ca/clients.pem"
tls_min_version = "1.3"
auth_exempt_probes = false

[http.basic_auth]
users = { prometheus = "$2y$04$23cokb6d.c4P5W9JRd2xeOGgm0ofo8iJI5gN4bRRLmtJkuZWn0fT6", "ops team" = "$2b$10$0d2U4njcfyjjwmsuycAMZOl8Nlb0sDLBatE5iakaAV3z8Z2CYxZEa" }
)");
  EXPECT_TRUE(config.http.tls());
  EXPECT_EQ(config.http.tls_cert_file, "/etc/seatwatch/tls/server.crt");
  EXPECT_EQ(config.http.tls_key_file, "/abs/server.key");
  EXPECT_EQ(config.http.tls_client_ca_file, "/etc/ca/clients.pem");
  EXPECT_EQ(config.http.tls_min_version, HttpConfig::TlsVersion::kTls13);
  EXPECT_FALSE(config.http.auth_exempt_probes);
  ASSERT_EQ(config.http.basic_auth_users.size(), 2u);
  EXPECT_EQ(config.http.basic_auth_users.at("prometheus"), kHash);
  EXPECT_EQ(config.http.basic_auth_users.count("ops team"), 1u);
  EXPECT_EQ(config.http.KeyLocation("tls_cert_file").line, 2);
}

TEST(HttpTlsConfigTest, KeyWithoutCertificate) {
  EXPECT_EQ(ErrorOf("[http]\ntls_key_file = \"k.pem\"\n"),
            std::string(kPath) + ":2:16: http.tls_key_file: needs http.tls_cert_file: TLS is on only with a "
                                 "certificate");
}

TEST(HttpTlsConfigTest, CertificateWithoutKey) {
  EXPECT_EQ(ErrorOf("[http]\nlisten = \"127.0.0.1:1\"\ntls_cert_file = \"c.pem\"\n"),
            std::string(kPath) + ":3:17: http.tls_key_file: is required with http.tls_cert_file");
}

TEST(HttpTlsConfigTest, ClientCaOrVersionWithoutCertificate) {
  EXPECT_NE(ErrorOf("[http]\ntls_client_ca_file = \"ca.pem\"\n")
                .find(":2:22: http.tls_client_ca_file: needs http.tls_cert_file"),
            std::string::npos);
  EXPECT_NE(ErrorOf("[http]\ntls_min_version = \"1.3\"\n").find(":2:19: http.tls_min_version: needs"),
            std::string::npos);
}

TEST(HttpTlsConfigTest, UnknownTlsVersion) {
  for (const char* value : {"\"1.1\"", "\"TLS13\"", "\"1.3 \"", "1.3", "13"}) {
    std::string error = ErrorOf(std::string("[http]\ntls_cert_file = \"c\"\ntls_key_file = \"k\"\n"
                                            "tls_min_version = ") + value + "\n");
    EXPECT_EQ(error, std::string(kPath) + ":4:19: http.tls_min_version: must be \"1.2\" or \"1.3\"") << value;
  }
}

TEST(HttpTlsConfigTest, EmptyFileName) {
  EXPECT_EQ(ErrorOf("[http]\ntls_cert_file = \"\"\n"),
            std::string(kPath) + ":2:17: http.tls_cert_file: must not be empty");
}

TEST(HttpTlsConfigTest, HashThatIsNotBcrypt) {
  std::string error = ErrorOf("[http.basic_auth]\nusers = { prometheus = \"$6$salt$abc\" }\n");
  EXPECT_NE(error.find(std::string(kPath) + ":2:11: http.basic_auth.users.prometheus: is not a bcrypt hash"),
            std::string::npos)
      << error;
  error = ErrorOf("[http.basic_auth.users]\nprometheus = \"s3cret\"\n");
  EXPECT_NE(error.find(":2:1: http.basic_auth.users.prometheus: is not a bcrypt hash"), std::string::npos)
      << error;
  // The problem names the key and never echoes the value.
  EXPECT_EQ(error.find("s3cret"), std::string::npos) << error;
  error = ErrorOf("[http.basic_auth]\nusers = { prometheus = 5 }\n");
  EXPECT_NE(error.find("http.basic_auth.users.prometheus: must be a string"), std::string::npos) << error;
}

TEST(HttpTlsConfigTest, UsersTableMistakes) {
  EXPECT_NE(ErrorOf("[http.basic_auth]\n").find("http.basic_auth.users: is required"), std::string::npos);
  EXPECT_NE(ErrorOf("[http.basic_auth]\nusers = {}\n").find(":2:9: http.basic_auth.users: must name at least one user"),
            std::string::npos);
  EXPECT_NE(ErrorOf("[http.basic_auth]\nusers = [\"a\"]\n").find("http.basic_auth.users: must be a table"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string("[http.basic_auth]\nusers = { \"a:b\" = \"") + kHash + "\" }\n")
                .find("http.basic_auth.users: \"a:b\" is not a usable user name"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string("[http.basic_auth]\nuser = { a = \"") + kHash + "\" }\n")
                .find(":2:1: http.basic_auth.user: unknown key"),
            std::string::npos);
  EXPECT_NE(ErrorOf("[http]\nauth_exempt_probes = \"yes\"\n").find("http.auth_exempt_probes: must be true or false"),
            std::string::npos);
  EXPECT_NE(ErrorOf("[http]\ntls_cert = \"c\"\n").find("http.tls_cert: unknown key"), std::string::npos);
}

// Real files, made by openssl for the test.
class HttpTlsFilesTest : public ::testing::Test {
 protected:
  HttpTlsFilesTest() : dir_(testing::MakeTempDir("seatwatch-tls-config")) {
    for (const char* name : {"a", "b"}) {
      std::string out;
      std::string command = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=" +
                            std::string(name) + " -keyout " + dir_ + "/" + name + ".key -out " + dir_ + "/" +
                            name + ".crt";
      EXPECT_EQ(testing::RunCommand(command, &out), 0) << out;
    }
  }

  std::string Load(const std::string& http) {
    testing::WriteFile(dir_ + "/seatwatch.toml", "allow_no_checks = true\n[http]\n" + http);
    try {
      Config config = LoadConfig(dir_ + "/seatwatch.toml");
      return config.http.tls_cert_pem.find("BEGIN CERTIFICATE") != std::string::npos ? "ok" : "no pem";
    } catch (const ConfigError& e) {
      return e.what();
    }
  }

  std::string dir_;
};

TEST_F(HttpTlsFilesTest, AMatchingPairLoads) {
  EXPECT_EQ(Load("tls_cert_file = \"a.crt\"\ntls_key_file = \"a.key\"\n"), "ok");
  EXPECT_EQ(Load("tls_cert_file = \"a.crt\"\ntls_key_file = \"a.key\"\ntls_client_ca_file = \"b.crt\"\n"), "ok");
}

TEST_F(HttpTlsFilesTest, AMissingFileNamesItsKey) {
  EXPECT_EQ(Load("tls_cert_file = \"missing.crt\"\ntls_key_file = \"a.key\"\n"),
            dir_ + "/seatwatch.toml:3:17: http.tls_cert_file: cannot read " + dir_ +
                "/missing.crt: No such file or directory");
  EXPECT_EQ(Load("tls_cert_file = \"a.crt\"\ntls_key_file = \"a.key\"\ntls_client_ca_file = \"nope.pem\"\n"),
            dir_ + "/seatwatch.toml:5:22: http.tls_client_ca_file: cannot read " + dir_ +
                "/nope.pem: No such file or directory");
}

TEST_F(HttpTlsFilesTest, AKeyOfAnotherCertificateIsRefused) {
  std::string error = Load("tls_cert_file = \"a.crt\"\ntls_key_file = \"b.key\"\n");
  EXPECT_EQ(error.find(dir_ + "/seatwatch.toml:4:16: http.tls_key_file: " + dir_ + "/b.key does not match the "
                              "certificate"),
            0u)
      << error;
}

TEST_F(HttpTlsFilesTest, FilesThatAreNotPemAreRefused) {
  testing::WriteFile(dir_ + "/junk.pem", "not a certificate\n");
  std::string error = Load("tls_cert_file = \"junk.pem\"\ntls_key_file = \"a.key\"\n");
  EXPECT_NE(error.find("http.tls_cert_file: " + dir_ + "/junk.pem holds no PEM certificate"), std::string::npos)
      << error;
  error = Load("tls_cert_file = \"a.crt\"\ntls_key_file = \"a.crt\"\n");
  EXPECT_NE(error.find("http.tls_key_file: " + dir_ + "/a.crt holds no unencrypted PEM private key"),
            std::string::npos)
      << error;
  error = Load("tls_cert_file = \"a.crt\"\ntls_key_file = \"a.key\"\ntls_client_ca_file = \"a.key\"\n");
  EXPECT_NE(error.find("http.tls_client_ca_file: " + dir_ + "/a.key holds no PEM certificate"), std::string::npos)
      << error;
}

TEST_F(HttpTlsFilesTest, CheckConfigDescribesHowThePortIsServed) {
  EXPECT_EQ(DescribeHttp(ParseText("")), "http: 127.0.0.1:9646 over plain HTTP, no authentication");
  testing::WriteFile(dir_ + "/seatwatch.toml", std::string("allow_no_checks = true\n[http]\n") +
                                                   "tls_cert_file = \"a.crt\"\ntls_key_file = \"a.key\"\n"
                                                   "tls_client_ca_file = \"b.crt\"\ntls_min_version = \"1.3\"\n"
                                                   "[http.basic_auth]\nusers = { u = \"" + kHash + "\" }\n");
  std::string line = DescribeHttp(LoadConfig(dir_ + "/seatwatch.toml"));
  EXPECT_EQ(line.find("http: 127.0.0.1:9646 over HTTPS (TLS 1.3 and later, certificate serial "), 0u) << line;
  EXPECT_NE(line.find(" /CN=a until "), std::string::npos) << line;
  EXPECT_NE(line.find(", client certificates required), basic auth: 1 user (/healthz and /readyz exempt)"),
            std::string::npos)
      << line;
}

constexpr long kDaySeconds = 24 * 3600;

// Clients refuse such a certificate: serving it would fail every scrape, so
// start, --check-config and SIGHUP (all through LoadConfig) refuse it, naming
// the file and its dates.
TEST_F(HttpTlsFilesTest, AnExpiredCertificateIsRefused) {
  testing::WriteCertificate(dir_, "old", -30 * kDaySeconds, -kDaySeconds);
  std::string error = Load("tls_cert_file = \"old.crt\"\ntls_key_file = \"old.key\"\n");
  EXPECT_EQ(error.find(dir_ + "/seatwatch.toml:3:17: http.tls_cert_file: " + dir_ + "/old.crt expired at 20"), 0u)
      << error;
  EXPECT_NE(error.find(" (valid from 20"), std::string::npos) << error;
  EXPECT_NE(error.find("Z until 20"), std::string::npos) << error;
}

TEST_F(HttpTlsFilesTest, ACertificateNotYetValidIsRefused) {
  testing::WriteCertificate(dir_, "early", kDaySeconds, 90 * kDaySeconds);
  std::string error = Load("tls_cert_file = \"early.crt\"\ntls_key_file = \"early.key\"\n");
  EXPECT_EQ(error.find(dir_ + "/seatwatch.toml:3:17: http.tls_cert_file: " + dir_ +
                       "/early.crt is not valid before 20"),
            0u)
      << error;
}

TEST_F(HttpTlsFilesTest, CheckConfigWarnsOfACertificateThatExpiresWithinFourteenDays) {
  testing::WriteCertificate(dir_, "soon", -kDaySeconds, 3 * kDaySeconds + 3600);
  testing::WriteCertificate(dir_, "later", -kDaySeconds, 30 * kDaySeconds);
  testing::WriteFile(dir_ + "/seatwatch.toml", "allow_no_checks = true\n[http]\n"
                                               "tls_cert_file = \"soon.crt\"\ntls_key_file = \"soon.key\"\n");
  Config soon = LoadConfig(dir_ + "/seatwatch.toml");
  auto lines = HttpWarnings(soon, http::UnixNowSeconds());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].find("warning: http.tls_cert_file: " + dir_ + "/soon.crt expires at 20"), 0u) << lines[0];
  EXPECT_NE(lines[0].find(", in 3 days: renew it"), std::string::npos) << lines[0];

  testing::WriteFile(dir_ + "/seatwatch.toml", "allow_no_checks = true\n[http]\n"
                                               "tls_cert_file = \"later.crt\"\ntls_key_file = \"later.key\"\n");
  EXPECT_TRUE(HttpWarnings(LoadConfig(dir_ + "/seatwatch.toml"), http::UnixNowSeconds()).empty());
  EXPECT_TRUE(HttpWarnings(ParseText(""), http::UnixNowSeconds()).empty());
}

}  // namespace
}  // namespace seatwatch::config
