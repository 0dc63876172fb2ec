#include "http/tls_metrics.h"

#include <vector>

#include "metrics/family.h"
#include "metrics/family_text.h"

namespace seatwatch::http {

std::string RenderTlsMetrics(const TlsCredentials& served) {
  std::vector<prometheus::MetricFamily> families;
  // Read at the scrape, not from the last poll: the certificate that new
  // connections get now (SIGHUP may have rotated it).
  families.push_back(metrics::SingleGauge(
      "seatwatch_tls_certificate_expiry_timestamp_seconds",
      "notAfter of the TLS certificate served to new connections, unix time.",
      static_cast<double>(served.validity().not_after)));
  return metrics::RenderText(std::move(families));
}

}  // namespace seatwatch::http
