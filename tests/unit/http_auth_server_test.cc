// Basic auth through a real CivetWeb server (plain HTTP, loopback): the 401
// and its challenge, the probes' exemption, and the order method -> auth ->
// route.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "http/basic_auth_gate.h"
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
    options.threads = 4;
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

}  // namespace
}  // namespace seatwatch
