// Basic auth without a server: bcrypt through libxcrypt, the Authorization
// header, the bounded queue of bcrypts, the cache of verified credentials
// (across reloads too) and the gate's exemptions.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "http/basic_auth.h"
#include "http/basic_auth_gate.h"
#include "http/basic_auth_header.h"
#include "http/bcrypt.h"
#include "http/bcrypt_queue.h"

namespace seatwatch::http {
namespace {

using namespace std::string_literals;

// Made with `htpasswd -nbBC 10 user pw` when this test was written: the
// format a user copies from htpasswd or a Prometheus web.config.file.
constexpr const char* kHtpasswdHash = "$2y$10$0d2U4njcfyjjwmsuycAMZOl8Nlb0sDLBatE5iakaAV3z8Z2CYxZEa";
// `htpasswd -nbBC 4 prometheus s3cret`: cost 4 keeps the cache tests quick.
constexpr const char* kCheapHash = "$2y$04$23cokb6d.c4P5W9JRd2xeOGgm0ofo8iJI5gN4bRRLmtJkuZWn0fT6";

TEST(BcryptTest, HtpasswdHashVerifies) {
  EXPECT_EQ(BcryptProblem(kHtpasswdHash), "");
  EXPECT_EQ(BcryptCost(kHtpasswdHash), 10);
  EXPECT_TRUE(BcryptMatches("pw", kHtpasswdHash));
  EXPECT_FALSE(BcryptMatches("pW", kHtpasswdHash));
  EXPECT_FALSE(BcryptMatches("", kHtpasswdHash));
  // crypt reads a C string: "pw\0anything" must not pass as "pw".
  EXPECT_FALSE(BcryptMatches("pw\0x"s, kHtpasswdHash));
}

TEST(BcryptTest, HashMadeByCryptGensaltVerifies) {
  std::string hash = BcryptHash("correct horse", 4);
  EXPECT_EQ(hash.substr(0, 7), "$2b$04$");
  EXPECT_EQ(BcryptProblem(hash), "");
  EXPECT_TRUE(BcryptMatches("correct horse", hash));
  EXPECT_FALSE(BcryptMatches("correct horse ", hash));
  // A fresh salt each time.
  EXPECT_NE(BcryptHash("correct horse", 4), hash);
}

TEST(BcryptTest, OnlyBcryptIsAccepted) {
  EXPECT_NE(BcryptProblem("secret"), "");
  EXPECT_NE(BcryptProblem("$1$abcdefgh$5Xf1Tw2Ti0Co8gf9VtM2X."), "");  // MD5-crypt
  EXPECT_NE(BcryptProblem("$6$salt$hash"), "");                        // SHA-512-crypt
  EXPECT_NE(BcryptProblem("$2x$10$0d2U4njcfyjjwmsuycAMZOl8Nlb0sDLBatE5iakaAV3z8Z2CYxZEa"), "");
  EXPECT_NE(BcryptProblem("$2y$10$0d2U4njcfyjjwmsuycAMZOl8Nlb0sDLBatE5iakaAV3z8Z2CYxZE"), "");  // short
  EXPECT_NE(BcryptProblem("$2y$03$0d2U4njcfyjjwmsuycAMZOl8Nlb0sDLBatE5iakaAV3z8Z2CYxZEa"), "");  // cost
  EXPECT_NE(BcryptProblem("$2y$1a$0d2U4njcfyjjwmsuycAMZOl8Nlb0sDLBatE5iakaAV3z8Z2CYxZEa"), "");
  EXPECT_NE(BcryptProblem("$2y$10$0d2U4njcfyjjwmsuycAMZOl8Nlb0sDLBatE5iakaAV3z8Z2CYxZE!"), "");
  EXPECT_EQ(BcryptProblem("$2a$10$0d2U4njcfyjjwmsuycAMZOl8Nlb0sDLBatE5iakaAV3z8Z2CYxZEa"), "");
  EXPECT_EQ(BcryptProblem("$2b$31$0d2U4njcfyjjwmsuycAMZOl8Nlb0sDLBatE5iakaAV3z8Z2CYxZEa"), "");
}

TEST(BcryptTest, ConstantTimeCompare) {
  EXPECT_TRUE(EqualInConstantTime("", ""));
  EXPECT_TRUE(EqualInConstantTime("abc\0d"s, "abc\0d"s));
  EXPECT_FALSE(EqualInConstantTime("abc\0d"s, "abc\0e"s));
  EXPECT_FALSE(EqualInConstantTime("abc", "abd"));
  EXPECT_FALSE(EqualInConstantTime("xbc", "abc"));
  EXPECT_FALSE(EqualInConstantTime("abc", "abcd"));
  EXPECT_FALSE(EqualInConstantTime("", "a"));
}

TEST(BasicAuthHeaderTest, ParsesUserAndPassword) {
  auto credentials = ParseBasicAuthorization("Basic dXNlcjpwdw==");  // user:pw
  ASSERT_TRUE(credentials);
  EXPECT_EQ(credentials->user, "user");
  EXPECT_EQ(credentials->password, "pw");
  // The scheme in any case; the password may hold colons.
  credentials = ParseBasicAuthorization("bASIC   cHJvbWV0aGV1czpzOmM6cg==  ");  // prometheus:s:c:r
  ASSERT_TRUE(credentials);
  EXPECT_EQ(credentials->user, "prometheus");
  EXPECT_EQ(credentials->password, "s:c:r");
  credentials = ParseBasicAuthorization("Basic dTo=");  // "u:": an empty password
  ASSERT_TRUE(credentials);
  EXPECT_EQ(credentials->user, "u");
  EXPECT_EQ(credentials->password, "");
}

TEST(BasicAuthHeaderTest, RefusesWhatIsNotBasicCredentials) {
  EXPECT_FALSE(ParseBasicAuthorization(""));
  EXPECT_FALSE(ParseBasicAuthorization("Basic"));
  EXPECT_FALSE(ParseBasicAuthorization("Basic "));
  EXPECT_FALSE(ParseBasicAuthorization("Bearer dXNlcjpwdw=="));
  EXPECT_FALSE(ParseBasicAuthorization("BasicdXNlcjpwdw=="));
  EXPECT_FALSE(ParseBasicAuthorization("Basic dXNlcnB3"));      // "userpw": no colon
  EXPECT_FALSE(ParseBasicAuthorization("Basic dXNlcjpwdw"));    // padding missing
  EXPECT_FALSE(ParseBasicAuthorization("Basic dXNl=jpwdw=="));  // '=' inside
  EXPECT_FALSE(ParseBasicAuthorization("Basic dXNlc*pwdw=="));
  EXPECT_FALSE(ParseBasicAuthorization("Basic " + std::string(8000, 'A')));
}

class BasicAuthTest : public ::testing::Test {
 protected:
  BasicAuth auth_{{{"prometheus", kCheapHash}}};
};

TEST_F(BasicAuthTest, AVerifiedCredentialIsRememberedAndFailuresAreNot) {
  uint64_t start = auth_.bcrypt_runs();
  EXPECT_TRUE(auth_.Verify("prometheus", "s3cret"));
  EXPECT_EQ(auth_.bcrypt_runs(), start + 1);
  // The scrapes after the first cost no bcrypt.
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(auth_.Verify("prometheus", "s3cret"));
  EXPECT_EQ(auth_.bcrypt_runs(), start + 1);
  // A wrong password is checked by bcrypt every time, and leaves the
  // remembered right one in place.
  EXPECT_FALSE(auth_.Verify("prometheus", "s3cre"));
  EXPECT_FALSE(auth_.Verify("prometheus", "s3cre"));
  EXPECT_FALSE(auth_.Verify("prometheus", "s3cret\n"));
  EXPECT_EQ(auth_.bcrypt_runs(), start + 4);
  EXPECT_TRUE(auth_.Verify("prometheus", "s3cret"));
  EXPECT_EQ(auth_.bcrypt_runs(), start + 4);
}

TEST_F(BasicAuthTest, AnUnknownUserCostsABcryptToo) {
  uint64_t start = auth_.bcrypt_runs();
  EXPECT_FALSE(auth_.Verify("grafana", "s3cret"));
  EXPECT_FALSE(auth_.Verify("Prometheus", "s3cret"));
  EXPECT_EQ(auth_.bcrypt_runs(), start + 2);
}

TEST_F(BasicAuthTest, NewUsersForgetRememberedCredentials) {
  EXPECT_TRUE(auth_.Verify("prometheus", "s3cret"));
  std::string hash = BcryptHash("rotated", 4);
  auth_.SetUsers({{"prometheus", hash}});
  uint64_t start = auth_.bcrypt_runs();
  EXPECT_FALSE(auth_.Verify("prometheus", "s3cret"));
  EXPECT_EQ(auth_.bcrypt_runs(), start + 1);
  EXPECT_TRUE(auth_.Verify("prometheus", "rotated"));
  EXPECT_TRUE(auth_.Verify("prometheus", "rotated"));
  EXPECT_EQ(auth_.bcrypt_runs(), start + 2);
}

// A reload (a certificate rotation, any change of the config) must not make
// every scraper pay a bcrypt again: behind a flood of wrong passwords that
// bcrypt waited for seconds. What verified against a hash the user still has
// is kept; a user whose hash changed, or who is gone, is checked anew.
TEST_F(BasicAuthTest, AReloadKeepsWhatVerifiedAgainstAnUnchangedHash) {
  std::string grafana_hash = BcryptHash("dashboards", 4);
  auth_.SetUsers({{"prometheus", kCheapHash}, {"grafana", grafana_hash}});
  EXPECT_TRUE(auth_.Verify("prometheus", "s3cret"));
  EXPECT_TRUE(auth_.Verify("grafana", "dashboards"));
  uint64_t start = auth_.bcrypt_runs();
  auth_.SetUsers({{"prometheus", kCheapHash}, {"grafana", BcryptHash("rotated", 4)}});
  EXPECT_TRUE(auth_.Verify("prometheus", "s3cret"));
  EXPECT_EQ(auth_.bcrypt_runs(), start);
  EXPECT_FALSE(auth_.Verify("grafana", "dashboards"));
  EXPECT_EQ(auth_.bcrypt_runs(), start + 1);
  // Gone, then back with the same hash: checked anew (nothing was kept).
  auth_.SetUsers({{"grafana", grafana_hash}});
  auth_.SetUsers({{"grafana", grafana_hash}, {"prometheus", kCheapHash}});
  EXPECT_TRUE(auth_.Verify("prometheus", "s3cret"));
  EXPECT_EQ(auth_.bcrypt_runs(), start + 2);
}

TEST(BcryptQueueTest, BeyondItsCapacityAVerificationIsRefusedAtOnce) {
  // Cost 12: about a quarter of a second each, long enough to see the queue.
  std::string slow = BcryptHash("slow", 12);
  BcryptQueue queue(2);
  std::vector<std::thread> waiting;
  std::atomic<int> matched{0};
  for (int i = 0; i < 2; ++i) {
    waiting.emplace_back([&] {
      auto result = queue.Matches("slow", slow);
      if (result && result->matches) ++matched;
    });
  }
  while (queue.size() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(queue.Matches("slow", slow));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(50));
  EXPECT_EQ(queue.refused(), 1u);
  for (auto& thread : waiting) thread.join();
  EXPECT_EQ(matched.load(), 2);
  EXPECT_EQ(queue.size(), 0u);
  auto result = queue.Matches("wrong", slow);
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->matches);
  EXPECT_GT(result->took, std::chrono::milliseconds(1));
  EXPECT_EQ(queue.runs(), 3u);
}

TEST_F(BasicAuthTest, VerifiesFromManyThreadsWhileUsersAreReplaced) {
  std::atomic<int> wrong_verdicts{0};
  std::vector<std::thread> scrapers;
  for (int t = 0; t < 4; ++t) {
    scrapers.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        if (!auth_.Verify("prometheus", "s3cret")) ++wrong_verdicts;
        if (auth_.Verify("prometheus", "wrong")) ++wrong_verdicts;
      }
    });
  }
  for (int i = 0; i < 5; ++i) auth_.SetUsers({{"prometheus", kCheapHash}});
  for (auto& thread : scrapers) thread.join();
  EXPECT_EQ(wrong_verdicts.load(), 0);
}

TEST(BasicAuthGateTest, ProbesAreExemptOnlyWhenSaid) {
  const char* right = "Basic cHJvbWV0aGV1czpzM2NyZXQ=";  // prometheus:s3cret
  const char* wrong = "Basic cHJvbWV0aGV1czpzM2NyZXU=";  // prometheus:s3creu
  BasicAuthGate gate({{"prometheus", kCheapHash}}, true);
  EXPECT_TRUE(gate.enabled());
  EXPECT_TRUE(gate.Allows("/healthz", nullptr));
  EXPECT_TRUE(gate.Allows("/readyz", nullptr));
  EXPECT_FALSE(gate.Allows("/metrics", nullptr));
  EXPECT_FALSE(gate.Allows("/", nullptr));
  EXPECT_FALSE(gate.Allows("/healthz/", nullptr));
  EXPECT_FALSE(gate.Allows("/metrics", wrong));
  EXPECT_TRUE(gate.Allows("/metrics", right));
  EXPECT_TRUE(gate.Allows("/api/locks", right));

  gate.Reload({{"prometheus", kCheapHash}}, false);
  EXPECT_FALSE(gate.Allows("/healthz", nullptr));
  EXPECT_FALSE(gate.Allows("/readyz", wrong));
  EXPECT_TRUE(gate.Allows("/readyz", right));

  // No users: nothing to check.
  gate.Reload({}, false);
  EXPECT_FALSE(gate.enabled());
  EXPECT_TRUE(gate.Allows("/metrics", nullptr));
}

}  // namespace
}  // namespace seatwatch::http
