// Basic auth through a real CivetWeb server (plain HTTP, loopback): the 401
// and its challenge, the probes' exemption, the order method -> auth ->
// route, the 503 when too many credentials are being checked, and response
// times that do not tell which users exist.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "http/basic_auth_gate.h"
#include "http/bcrypt.h"
#include "http/server.h"
#include "support/http_client.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using testing::HttpExchange;

// `htpasswd -nbBC 4 prometheus s3cret`.
constexpr const char* kHash = "$2y$04$23cokb6d.c4P5W9JRd2xeOGgm0ofo8iJI5gN4bRRLmtJkuZWn0fT6";

class HttpAuthServerTest : public ::testing::Test {
 protected:
  HttpAuthServerTest() : port_(testing::FreePort()) {
    http::ServerOptions options;
    options.threads = 8;
    options.auth = gate_;
    server_ = std::make_unique<http::Server>("127.0.0.1:" + std::to_string(port_), options);
    for (const char* path : {"/metrics", "/healthz", "/readyz"}) {
      server_->Route(path, [path] {
        http::Response response;
        response.Text(200, std::string("served ") + path + "\n");
        return response;
      });
    }
    server_->Start();
  }

  testing::HttpResponse Get(const std::string& path, const std::string& authorization = "",
                            const std::string& method = "GET") {
    std::string request = method + " " + path + " HTTP/1.0\r\n";
    if (!authorization.empty()) request += "Authorization: " + authorization + "\r\n";
    return HttpExchange(port_, request + "\r\n");
  }

  int port_;
  std::shared_ptr<http::BasicAuthGate> gate_ =
      std::make_shared<http::BasicAuthGate>(std::map<std::string, std::string>{{"prometheus", kHash}}, true);
  std::unique_ptr<http::Server> server_;
};

TEST_F(HttpAuthServerTest, NoOrWrongCredentialsGetA401WithTheChallenge) {
  for (const std::string& authorization :
       {std::string(), std::string("Basic cHJvbWV0aGV1czpzM2NyZXU="), std::string("Bearer abc"),
        std::string("Basic !!!!")}) {
    testing::HttpResponse response = Get("/metrics", authorization);
    EXPECT_EQ(response.status, 401) << authorization;
    EXPECT_NE(response.headers.find("WWW-Authenticate: Basic realm=\"seatwatch\", charset=\"UTF-8\"\r\n"),
              std::string::npos)
        << response.headers;
    EXPECT_EQ(response.body.find("served"), std::string::npos);
  }
  // A 401 of a path that does not exist: nothing about the routes leaks.
  EXPECT_EQ(Get("/nope").status, 401);
}

TEST_F(HttpAuthServerTest, RightCredentialsAreServed) {
  testing::HttpResponse response = Get("/metrics", "Basic cHJvbWV0aGV1czpzM2NyZXQ=");
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.body, "served /metrics\n");
  EXPECT_EQ(Get("/nope", "Basic cHJvbWV0aGV1czpzM2NyZXQ=").status, 404);
}

TEST_F(HttpAuthServerTest, ProbesAreExemptUntilReloadedOtherwise) {
  EXPECT_EQ(Get("/healthz").status, 200);
  EXPECT_EQ(Get("/readyz").status, 200);
  gate_->Reload({{"prometheus", kHash}}, false);
  EXPECT_EQ(Get("/healthz").status, 401);
  EXPECT_EQ(Get("/readyz").status, 401);
  EXPECT_EQ(Get("/readyz", "Basic cHJvbWV0aGV1czpzM2NyZXQ=").status, 200);
}

TEST_F(HttpAuthServerTest, TheMethodIsCheckedBeforeCredentials) {
  testing::HttpResponse response = Get("/metrics", "", "POST");
  EXPECT_EQ(response.status, 405);
}

// "Basic " + base64("user:password").
std::string Basic(const std::string& user, const std::string& password) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string in = user + ":" + password;
  std::string out;
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << 16;
    if (i + 1 < in.size()) n |= static_cast<uint32_t>(static_cast<unsigned char>(in[i + 1])) << 8;
    if (i + 2 < in.size()) n |= static_cast<uint32_t>(static_cast<unsigned char>(in[i + 2]));
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kAlphabet[n & 63] : '=';
  }
  return "Basic " + out;
}

// The median response time of `count` requests for /metrics with these
// credentials, each answered with `status`.
double MedianMillis(int port, const std::string& authorization, int count, int status) {
  std::vector<double> millis;
  for (int i = 0; i < count; ++i) {
    auto start = std::chrono::steady_clock::now();
    testing::HttpResponse response =
        HttpExchange(port, "GET /metrics HTTP/1.0\r\nAuthorization: " + authorization + "\r\n\r\n");
    millis.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    EXPECT_EQ(response.status, status) << authorization;
  }
  std::sort(millis.begin(), millis.end());
  return millis[millis.size() / 2];
}

// Users whose hashes have different costs: before, a wrong password took
// what its user's own bcrypt takes (cost 4: about 1 ms, cost 9: about 30 ms)
// and an unknown user what the dummy hash at the dearest cost takes, so the
// time of a 401 told which users exist. Now every failure lasts as long as a
// bcrypt at the dearest cost.
TEST(HttpAuthTimingTest, AWrongPasswordTakesAsLongForEveryUserAsForAnUnknownOne) {
  int port = testing::FreePort();
  auto gate = std::make_shared<http::BasicAuthGate>(
      std::map<std::string, std::string>{{"prometheus", kHash}, {"grafana", http::BcryptHash("dashboards", 9)}},
      true);
  http::ServerOptions options;
  options.threads = 4;
  options.auth = gate;
  http::Server server("127.0.0.1:" + std::to_string(port), options);
  server.Route("/metrics", [] {
    http::Response response;
    response.Text(200, "served\n");
    return response;
  });
  server.Start();
  // One of each first, so that the measures below see a warm server.
  MedianMillis(port, Basic("grafana", "wrong"), 1, 401);
  double cheap = MedianMillis(port, Basic("prometheus", "wrong"), 9, 401);
  double dear = MedianMillis(port, Basic("grafana", "wrong"), 9, 401);
  double unknown = MedianMillis(port, Basic("nobody", "wrong"), 9, 401);
  std::cout << "median 401: cost-4 user " << cheap << " ms, cost-9 user " << dear << " ms, unknown user " << unknown
            << " ms\n";
  // Within a factor of 2 on a loaded machine; before, 20 to 30 apart.
  EXPECT_GT(cheap, dear / 2) << "cost 4 " << cheap << " ms, cost 9 " << dear << " ms, unknown " << unknown << " ms";
  EXPECT_LT(cheap, dear * 2) << "cost 4 " << cheap << " ms, cost 9 " << dear << " ms, unknown " << unknown << " ms";
  EXPECT_GT(unknown, dear / 2) << "cost 9 " << dear << " ms, unknown " << unknown << " ms";
  EXPECT_LT(unknown, dear * 2) << "cost 9 " << dear << " ms, unknown " << unknown << " ms";
  // The right password is not held back, nor remembered ones.
  EXPECT_LT(MedianMillis(port, Basic("prometheus", "s3cret"), 3, 200), dear);
}

// Credentials not yet remembered while the bcrypt queue is full: a 503 with
// Retry-After at once, not a wait behind the others nor a 401 (they may be
// right); remembered ones are served all the while.
TEST_F(HttpAuthServerTest, CredentialsBeyondTheBcryptQueueGetA503AtOnce) {
  // Cost 12: a quarter of a second or so per bcrypt keeps the queue full.
  gate_->Reload({{"prometheus", kHash}, {"slow", http::BcryptHash("slow", 12)}}, true);
  ASSERT_EQ(Get("/metrics", Basic("prometheus", "s3cret")).status, 200);
  std::vector<std::thread> flood;
  std::atomic<int> unauthorized{0};
  for (int i = 0; i < http::BasicAuth::kBcryptQueueCapacity; ++i) {
    flood.emplace_back([&] {
      if (Get("/metrics", Basic("slow", "wrong")).status == 401) ++unauthorized;
    });
  }
  while (gate_->auth().bcrypts_queued() < http::BasicAuth::kBcryptQueueCapacity) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  auto start = std::chrono::steady_clock::now();
  testing::HttpResponse busy = Get("/metrics", Basic("slow", "slow"));
  testing::HttpResponse remembered = Get("/metrics", Basic("prometheus", "s3cret"));
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(busy.status, 503);
  EXPECT_NE(busy.headers.find("Retry-After: 1\r\n"), std::string::npos) << busy.headers;
  EXPECT_EQ(busy.body.find("served"), std::string::npos);
  EXPECT_EQ(remembered.status, 200);
  EXPECT_LT(elapsed, std::chrono::milliseconds(200));
  for (auto& thread : flood) thread.join();
  EXPECT_EQ(unauthorized.load(), http::BasicAuth::kBcryptQueueCapacity);
  // Once the queue has room, the same credentials are checked and served.
  EXPECT_EQ(Get("/metrics", Basic("slow", "slow")).status, 200);
}

}  // namespace
}  // namespace seatwatch
