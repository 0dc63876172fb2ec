#pragma once

#include <atomic>
#include <map>
#include <string>
#include <string_view>

#include "http/basic_auth.h"

namespace seatwatch::http {

// Whether a request may be served, by its path and Authorization header.
// With no users every request may; with users every path needs valid
// credentials except /healthz and /readyz when probes are exempt (kubelet
// and load-balancer probes carry none). Thread-safe; Reload swaps the users
// and the exemption for the requests that follow (SIGHUP).
class BasicAuthGate {
 public:
  BasicAuthGate(const std::map<std::string, std::string>& users, bool exempt_probes);

  void Reload(const std::map<std::string, std::string>& users, bool exempt_probes);
  // `authorization`: the header's value, or null when the request has none.
  // kBusy: the credentials are not remembered and too many others are being
  // checked (BasicAuth); answered 503 at once.
  AuthVerdict Admit(std::string_view path, const char* authorization);
  // Admit(...) == kAllowed.
  bool Allows(std::string_view path, const char* authorization);

  bool enabled() const { return auth_.enabled(); }
  const BasicAuth& auth() const { return auth_; }

 private:
  BasicAuth auth_;
  std::atomic<bool> exempt_probes_;
};

// The paths a probe asks for.
bool IsProbePath(std::string_view path);

}  // namespace seatwatch::http
