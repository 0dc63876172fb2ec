#pragma once

#include <string>

namespace seatwatch::testing {

struct HttpResponse {
  int status = 0;  // 0: no connection
  std::string body;
};

// A blocking HTTP/1.0 GET to 127.0.0.1, enough for the daemon's endpoints.
HttpResponse HttpGet(int port, const std::string& path);

}  // namespace seatwatch::testing
