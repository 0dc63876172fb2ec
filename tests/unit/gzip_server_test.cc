// The server's side of gzip (no daemon, no database): which requests get a
// gzip body, its headers, and HEAD agreeing with GET.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "http/server.h"
#include "support/gunzip.h"
#include "support/http_client.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using testing::Gunzip;
using testing::HttpExchange;

// The value of header `name` in the raw header lines, "" if absent.
std::string Header(const std::string& headers, const std::string& name) {
  std::string lines = "\r\n" + headers;
  auto at = lines.find("\r\n" + name + ": ");
  if (at == std::string::npos) return "";
  auto value = at + name.size() + 4;
  return lines.substr(value, lines.find("\r\n", value) - value);
}

class GzipServerTest : public ::testing::Test {
 protected:
  GzipServerTest() : port_(testing::FreePort()), server_("127.0.0.1:" + std::to_string(port_)) {
    for (int i = 0; i < 2000; ++i) {
      text_ += "inventory{event_id=\"" + std::to_string(i) + "\",kind=\"seats_free\"} 5\n";
    }
    held_ = std::make_shared<const std::string>(text_);
    server_.Route("/metrics", [this] {
      http::Response response;
      response.compressible = true;
      response.Append(held_);
      response.Append(std::make_shared<const std::string>("per_request 1\n"));
      return response;
    });
    server_.Route("/plain", [this] {
      http::Response response;
      response.Append(held_);
      return response;
    });
    server_.Start();
  }

  testing::HttpResponse Request(const std::string& method, const std::string& path,
                                const std::string& accept_encoding) {
    std::string request = method + " " + path + " HTTP/1.0\r\nHost: x\r\n";
    if (!accept_encoding.empty()) request += "Accept-Encoding: " + accept_encoding + "\r\n";
    return HttpExchange(port_, request + "\r\n");
  }

  int port_;
  std::string text_;
  std::shared_ptr<const std::string> held_;
  http::Server server_;
};

TEST_F(GzipServerTest, GzipWhenAcceptedIdentityOtherwise) {
  std::string whole = text_ + "per_request 1\n";
  auto gzip = Request("GET", "/metrics", "gzip");
  EXPECT_EQ(gzip.status, 200);
  EXPECT_EQ(Header(gzip.headers, "Content-Encoding"), "gzip") << gzip.headers;
  EXPECT_EQ(Header(gzip.headers, "Vary"), "Accept-Encoding");
  EXPECT_EQ(Header(gzip.headers, "Content-Length"), std::to_string(gzip.body.size()));
  EXPECT_EQ(Gunzip(gzip.body), whole);
  EXPECT_LT(gzip.body.size(), whole.size() / 10);

  for (std::string refused : {"", "identity", "gzip;q=0", "br"}) {
    auto identity = Request("GET", "/metrics", refused);
    EXPECT_EQ(identity.body, whole) << refused;
    EXPECT_EQ(Header(identity.headers, "Content-Encoding"), "") << refused;
    // Caches must know the body depends on the header even when it is identity.
    EXPECT_EQ(Header(identity.headers, "Vary"), "Accept-Encoding") << refused;
    EXPECT_EQ(Header(identity.headers, "Content-Length"), std::to_string(whole.size()));
  }
}

TEST_F(GzipServerTest, HeadSendsTheHeadersOfTheGet) {
  auto get = Request("GET", "/metrics", "gzip");
  auto head = Request("HEAD", "/metrics", "gzip");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.body, "");
  EXPECT_EQ(Header(head.headers, "Content-Encoding"), "gzip");
  EXPECT_EQ(Header(head.headers, "Content-Length"), std::to_string(get.body.size()));
}

TEST_F(GzipServerTest, ResponsesNotMarkedCompressibleStayIdentity) {
  auto plain = Request("GET", "/plain", "gzip");
  EXPECT_EQ(plain.body, text_);
  EXPECT_EQ(Header(plain.headers, "Content-Encoding"), "");
  EXPECT_EQ(Header(plain.headers, "Vary"), "");
  auto missing = Request("GET", "/nothing", "gzip");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(Header(missing.headers, "Content-Encoding"), "");
}

TEST_F(GzipServerTest, RepeatedScrapesServeTheSameBytes) {
  auto first = Request("GET", "/metrics", "gzip");
  auto second = Request("GET", "/metrics", "gzip");
  EXPECT_EQ(first.body, second.body);
}

}  // namespace
}  // namespace seatwatch
