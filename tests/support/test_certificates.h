#pragma once

#include <string>

namespace seatwatch::testing {

// Writes a self-signed EC P-256 certificate (CN=`name`, SAN IP 127.0.0.1)
// and its unencrypted key as dir/name.crt and dir/name.key, valid from
// now + not_before_offset to now + not_after_offset seconds (negative: in the
// past). OpenSSL 3.0's command line dates a certificate from now only, so an
// expired one is made here. Throws std::runtime_error if OpenSSL fails.
void WriteCertificate(const std::string& dir, const std::string& name, long not_before_offset,
                      long not_after_offset, long serial = 1);

}  // namespace seatwatch::testing
