#include "app/http_security.h"

#include <openssl/tls1.h>

#include <stdexcept>

#include "http/tls_credentials.h"
#include "http/tls_metrics.h"
#include "http/tls_validity.h"
#include "util/log.h"

namespace seatwatch::app {

namespace {

// LoadConfig refused a certificate that is not valid; this judges it again
// at the moment it is put to use.
std::shared_ptr<const http::TlsCredentials> CredentialsOf(const config::HttpConfig& http) {
  auto credentials = http::ParseTlsCredentials(http.tls_cert_pem, http.tls_key_pem, http.tls_client_ca_pem);
  std::string problem = http::ValidityProblem(credentials->validity(), http::UnixNowSeconds());
  if (!problem.empty()) throw std::runtime_error(http.tls_cert_file + " " + problem);
  return credentials;
}

void LogCertificate(const char* message, const config::HttpConfig& http, const http::TlsCredentials& tls) {
  log::Info(message, {{"cert", http.tls_cert_file},
                      {"serial", tls.serial()},
                      {"subject", tls.subject()},
                      {"not_after", tls.not_after()},
                      {"client_ca", http.tls_client_ca_file.empty() ? "none" : http.tls_client_ca_file}});
  int64_t now = http::UnixNowSeconds();
  if (http::ExpiresSoon(tls.validity(), now)) {
    log::Warn("TLS certificate expires soon: renew it, then send SIGHUP",
              {{"cert", http.tls_cert_file},
               {"serial", tls.serial()},
               {"not_after", http::UtcText(tls.validity().not_after)},
               {"expires_in", http::TimeLeftText(tls.validity(), now)}});
  }
}

void WarnIfCleartext(const config::HttpConfig& http) {
  if (!http.basic_auth_users.empty() && !http.tls()) {
    log::Warn("basic auth without TLS: passwords cross the network in clear text",
              {{"listen", http.listen}});
  }
}

const char* VersionName(config::HttpConfig::TlsVersion version) {
  return version == config::HttpConfig::TlsVersion::kTls13 ? "1.3" : "1.2";
}

}  // namespace

HttpSecurity::HttpSecurity(const config::HttpConfig& http)
    : started_(http),
      auth_(std::make_shared<http::BasicAuthGate>(http.basic_auth_users, http.auth_exempt_probes)) {
  if (http.tls()) {
    auto credentials = CredentialsOf(http);
    tls_ = std::make_shared<http::TlsStore>(credentials);
    LogCertificate("TLS certificate loaded", http, *credentials);
  }
  WarnIfCleartext(http);
  // The PEM texts live on in the store; no second copy of the key.
  started_.tls_key_pem.clear();
}

void HttpSecurity::Apply(http::ServerOptions& options) const {
  options.tls = tls_;
  options.tls_min_version =
      started_.tls_min_version == config::HttpConfig::TlsVersion::kTls13 ? TLS1_3_VERSION : TLS1_2_VERSION;
  options.auth = auth_;
}

http::MetricsSource HttpSecurity::MetricsSource() const {
  std::shared_ptr<http::TlsStore> tls = tls_;
  return [tls]() -> std::shared_ptr<const std::string> {
    if (!tls) return nullptr;
    auto served = tls->Current();
    return served ? std::make_shared<const std::string>(http::RenderTlsMetrics(*served)) : nullptr;
  };
}

void HttpSecurity::Reload(const config::HttpConfig& fresh) {
  if (fresh.listen != started_.listen) {
    log::Warn("http.listen changed: takes effect after a restart; still listening as before",
              {{"listen", started_.listen}, {"new_listen", fresh.listen}});
  }
  if (fresh.tls() != started_.tls()) {
    log::Warn(fresh.tls() ? "TLS turned on: takes effect after a restart; still serving plain HTTP"
                          : "TLS turned off: takes effect after a restart; still serving HTTPS with the "
                            "running certificate",
              {{"listen", started_.listen}});
  } else if (fresh.tls()) {
    if (fresh.tls_min_version != started_.tls_min_version) {
      log::Warn("http.tls_min_version changed: takes effect after a restart",
                {{"tls_min_version", VersionName(started_.tls_min_version)},
                 {"new_tls_min_version", VersionName(fresh.tls_min_version)}});
    }
    try {
      auto credentials = CredentialsOf(fresh);
      tls_->Set(credentials);
      LogCertificate("TLS certificate reloaded", fresh, *credentials);
    } catch (const std::exception& e) {
      // LoadConfig checked them; only a certificate that expired in between
      // gets here.
      log::Error("TLS certificate reload failed; keeping the running certificate",
                 {{"cert", fresh.tls_cert_file}, {"error", e.what()}});
    }
  }
  auth_->Reload(fresh.basic_auth_users, fresh.auth_exempt_probes);
  log::Info("basic auth users reloaded", {{"users", std::to_string(fresh.basic_auth_users.size())},
                                          {"auth_exempt_probes", fresh.auth_exempt_probes ? "true" : "false"}});
  WarnIfCleartext(fresh);
}

}  // namespace seatwatch::app
