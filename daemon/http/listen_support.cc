#include "http/listen_support.h"

#include <civetweb.h>

namespace seatwatch::http {

namespace {

// mg_check_feature's bit for IPv6 (civetweb.h documents the bits).
constexpr unsigned kFeatureIpv6 = 8;

}  // namespace

bool CivetWebHasIpv6() { return mg_check_feature(kFeatureIpv6) != 0; }

std::string ListenUnsupported(const std::string& listen) {
  if (!listen.empty() && listen.front() == '[' && !CivetWebHasIpv6()) {
    return "this build of CivetWeb has no IPv6: listen on an IPv4 address, e.g. "
           "\"127.0.0.1:9646\" or \"0.0.0.0:9646\"";
  }
  return "";
}

}  // namespace seatwatch::http
