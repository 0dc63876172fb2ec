#pragma once

#include <string>

#include "http/tls_credentials.h"

namespace seatwatch::http {

// seatwatch_tls_certificate_expiry_timestamp_seconds of `served` (its
// notAfter, unix seconds) in text format, for /metrics while TLS is on.
// Pure; cheap enough to render at each scrape.
std::string RenderTlsMetrics(const TlsCredentials& served);

}  // namespace seatwatch::http
