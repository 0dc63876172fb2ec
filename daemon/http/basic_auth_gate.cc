#include "http/basic_auth_gate.h"

#include "http/basic_auth_header.h"

namespace seatwatch::http {

BasicAuthGate::BasicAuthGate(const std::map<std::string, std::string>& users, bool exempt_probes)
    : auth_(users), exempt_probes_(exempt_probes) {}

void BasicAuthGate::Reload(const std::map<std::string, std::string>& users, bool exempt_probes) {
  auth_.SetUsers(users);
  exempt_probes_ = exempt_probes;
}

bool BasicAuthGate::Allows(std::string_view path, const char* authorization) {
  if (!auth_.enabled()) return true;
  if (exempt_probes_ && IsProbePath(path)) return true;
  if (!authorization) return false;
  auto credentials = ParseBasicAuthorization(authorization);
  return credentials && auth_.Verify(credentials->user, credentials->password);
}

bool IsProbePath(std::string_view path) { return path == "/healthz" || path == "/readyz"; }

}  // namespace seatwatch::http
