#pragma once

#include <memory>

#include "config/config.h"
#include "http/basic_auth_gate.h"
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
  // by LoadConfig) do not parse after all.
  explicit HttpSecurity(const config::HttpConfig& http);

  // Points the server at the store and the gate.
  void Apply(http::ServerOptions& options) const;

  // SIGHUP with a config that loaded: the new certificate, key and client
  // CAs are served to new connections, the new users checked. A certificate
  // that does not parse is logged and the old one kept. A change of listen,
  // of TLS on or off, or of tls_min_version is logged as needing a restart
  // and not applied.
  void Reload(const config::HttpConfig& fresh);

 private:
  config::HttpConfig started_;  // what the listener was started with
  std::shared_ptr<http::TlsStore> tls_;
  std::shared_ptr<http::BasicAuthGate> auth_;
};

}  // namespace seatwatch::app
