#include "http/basic_auth_gate.h"

#include "http/basic_auth_header.h"

namespace seatwatch::http {

BasicAuthGate::BasicAuthGate(const std::map<std::string, std::string>& users, bool exempt_probes)
    : auth_(users), exempt_probes_(exempt_probes) {}

void BasicAuthGate::Reload(const std::map<std::string, std::string>& users, bool exempt_probes) {
  auth_.SetUsers(users);
  exempt_probes_ = exempt_probes;
}

AuthVerdict BasicAuthGate::Admit(std::string_view path, const char* authorization) {
  if (!auth_.enabled()) return AuthVerdict::kAllowed;
  if (exempt_probes_ && IsProbePath(path)) return AuthVerdict::kAllowed;
  if (!authorization) return AuthVerdict::kDenied;
  auto credentials = ParseBasicAuthorization(authorization);
  if (!credentials) return AuthVerdict::kDenied;
  return auth_.Check(credentials->user, credentials->password);
}

bool BasicAuthGate::Allows(std::string_view path, const char* authorization) {
  return Admit(path, authorization) == AuthVerdict::kAllowed;
}

bool IsProbePath(std::string_view path) { return path == "/healthz" || path == "/readyz"; }

}  // namespace seatwatch::http
