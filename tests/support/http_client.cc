#include "support/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>

namespace seatwatch::testing {

HttpResponse HttpGet(int port, const std::string& path) {
  return HttpExchange(port, "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
}

HttpResponse HttpExchange(int port, const std::string& request) {
  HttpResponse response;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return response;
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return response;
  }
  if (send(fd, request.data(), request.size(), 0) < 0) {
    close(fd);
    return response;
  }
  std::string raw;
  char buffer[65536];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof buffer, 0)) > 0) raw.append(buffer, static_cast<size_t>(n));
  close(fd);
  auto space = raw.find(' ');
  auto header_end = raw.find("\r\n\r\n");
  if (space == std::string::npos || header_end == std::string::npos) return response;
  response.status = std::atoi(raw.c_str() + space + 1);
  auto first_line_end = raw.find("\r\n");
  response.headers = raw.substr(first_line_end + 2, header_end + 2 - (first_line_end + 2));
  response.body = raw.substr(header_end + 4);
  return response;
}

}  // namespace seatwatch::testing
