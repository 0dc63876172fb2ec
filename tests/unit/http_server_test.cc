// The HTTP server alone (no daemon, no database): method handling and what
// this build of CivetWeb can listen on.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

#include "http/listen_support.h"
#include "http/server.h"
#include "support/http_client.h"
#include "support/test_config.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using testing::HttpExchange;

class HttpServerTest : public ::testing::Test {
 protected:
  HttpServerTest() : port_(testing::FreePort()), server_("127.0.0.1:" + std::to_string(port_)) {
    server_.Route("/metrics", [] {
      http::Response response;
      response.Text(200, "up 1\n");
      return response;
    });
    server_.Start();
  }

  int port_;
  http::Server server_;
};

TEST_F(HttpServerTest, MethodNotAllowedSaysWhichAreAllowed) {
  for (std::string method : {"POST", "PUT", "DELETE", "PATCH"}) {
    auto response =
        HttpExchange(port_, method + " /metrics HTTP/1.0\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    EXPECT_EQ(response.status, 405) << method;
    EXPECT_NE(response.headers.find("\r\nAllow: GET, HEAD\r\n"), std::string::npos)
        << method << ":\n" << response.headers;
  }
}

TEST_F(HttpServerTest, GetAndHeadCarryNoAllow) {
  auto get = HttpExchange(port_, "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n");
  EXPECT_EQ(get.status, 200);
  EXPECT_EQ(get.body, "up 1\n");
  EXPECT_EQ(get.headers.find("Allow:"), std::string::npos) << get.headers;
  auto head = HttpExchange(port_, "HEAD /metrics HTTP/1.0\r\nHost: x\r\n\r\n");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.body, "");
  EXPECT_NE(head.headers.find("Content-Length: 5\r\n"), std::string::npos) << head.headers;
}

// One GET to [::1]:port; the status, or 0 when it cannot connect.
int Ipv6GetStatus(int port) {
  int fd = socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_port = htons(static_cast<uint16_t>(port));
  address.sin6_addr = in6addr_loopback;
  std::string raw;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
    std::string request = "GET /metrics HTTP/1.0\r\nHost: [::1]\r\n\r\n";
    send(fd, request.data(), request.size(), 0);
    char buffer[4096];
    ssize_t n;
    while ((n = recv(fd, buffer, sizeof buffer, 0)) > 0) raw.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  auto space = raw.find(' ');
  return space == std::string::npos ? 0 : std::atoi(raw.c_str() + space + 1);
}

// Debian's CivetWeb 1.15 is built without IPv6; whichever build is linked,
// an IPv6 listen address either works or is refused with the reason, never
// a bare "cannot listen".
TEST(HttpListenTest, Ipv6ListenWorksOrIsRefusedWithTheReason) {
  int port = testing::FreePort();
  std::string listen = "[::1]:" + std::to_string(port);
  http::Server server(listen);
  server.Route("/metrics", [] {
    http::Response response;
    response.Text(200, "up 1\n");
    return response;
  });
  if (http::CivetWebHasIpv6()) {
    EXPECT_EQ(http::ListenUnsupported(listen), "");
    server.Start();
    EXPECT_EQ(Ipv6GetStatus(port), 200);
    return;
  }
  try {
    server.Start();
    FAIL() << "an IPv6 listen address started without IPv6 in CivetWeb";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("this build of CivetWeb has no IPv6"), std::string::npos)
        << e.what();
  }
  // The config says so too, with file, line and key, so --check-config and
  // a reload catch it before the daemon tries to bind.
  std::string error = testing::ConfigErrorOf("[http]\nlisten = \"" + listen + "\"\n", "/etc/sw.toml");
  EXPECT_NE(error.find("/etc/sw.toml:2"), std::string::npos) << error;
  EXPECT_NE(error.find("http.listen"), std::string::npos) << error;
  EXPECT_NE(error.find("this build of CivetWeb has no IPv6"), std::string::npos) << error;
  // IPv4 is unaffected.
  EXPECT_EQ(http::ListenUnsupported("127.0.0.1:9646"), "");
  EXPECT_EQ(http::ListenUnsupported("0.0.0.0:9646"), "");
}

}  // namespace
}  // namespace seatwatch
