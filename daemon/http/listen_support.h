#pragma once

#include <string>

namespace seatwatch::http {

// Whether the linked CivetWeb was built with IPv6. Debian's 1.15 is not:
// there CivetWeb cannot bind "[::1]:9646" and says only that it failed.
bool CivetWebHasIpv6();

// Why `listen` (HOST:PORT) cannot be served by this build, or "" if it can.
// Used by the config parser, so --check-config and a reload say it too.
std::string ListenUnsupported(const std::string& listen);

}  // namespace seatwatch::http
