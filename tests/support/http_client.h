#pragma once

#include <string>

namespace seatwatch::testing {

struct HttpResponse {
  int status = 0;  // 0: no connection
  std::string headers;  // the header lines after the status line, raw
  std::string body;
};

// A blocking HTTP/1.0 GET to 127.0.0.1, enough for the daemon's endpoints.
HttpResponse HttpGet(int port, const std::string& path);

// Sends `request` as given (a whole HTTP/1.0 request, or one that asks the
// server to close) and reads until the server closes.
HttpResponse HttpExchange(int port, const std::string& request);

}  // namespace seatwatch::testing
