#pragma once

#include <memory>

#include "config/config.h"
#include "http/basic_auth_gate.h"
#include "http/handlers.h"
#include "http/server.h"
#include "http/tls_store.h"

namespace seatwatch::app {

// The daemon's TLS certificate store and Basic auth gate, built from [http]
// and kept for its life so that SIGHUP can change what they hold without
// restarting the listener. Not thread-safe itself (the signal thread alone
// calls it); what it hands the server is.
class HttpSecurity {
 public:
  // Throws std::runtime_error if the certificate and key (read and checked
  // by LoadConfig) do not parse after all, or are not valid now. Warns when
  // the certificate expires within 14 days.
  explicit HttpSecurity(const config::HttpConfig& http);

  // Points the server at the store and the gate.
  void Apply(http::ServerOptions& options) const;

  // seatwatch_tls_certificate_expiry_timestamp_seconds of the certificate
  // being served, for /metrics; null (no series) while TLS is off. Callable
  // from any thread.
  http::MetricsSource MetricsSource() const;

  // SIGHUP with a config that loaded: the new certificate, key and client
  // CAs are served to new connections, the new users checked. A certificate
  // that does not parse, or is expired or not yet valid, is logged and the
  // old one kept; one that expires within 14 days is served with a warning. A change of listen,
  // of TLS on or off, or of tls_min_version is logged as needing a restart
  // and not applied.
  void Reload(const config::HttpConfig& fresh);

 private:
  config::HttpConfig started_;  // what the listener was started with
  std::shared_ptr<http::TlsStore> tls_;
  std::shared_ptr<http::BasicAuthGate> auth_;
};

}  // namespace seatwatch::app
