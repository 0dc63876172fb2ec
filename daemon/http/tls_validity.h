#pragma once

#include <cstdint>
#include <string>

typedef struct x509_st X509;

namespace seatwatch::http {

// When a certificate may be served, in unix seconds (UTC), as its
// notBefore and notAfter say. Pure functions below judge it against a
// given time, so tests need no clock.
struct TlsValidity {
  int64_t not_before = 0;
  int64_t not_after = 0;
};

// Below this much time left, start and reload warn (and so does the
// SeatwatchTlsCertificateExpiring alert): time to renew.
constexpr int64_t kTlsExpiryWarningSeconds = 14 * 24 * 3600;

// Reads notBefore and notAfter; throws std::runtime_error if OpenSSL cannot
// convert them.
TlsValidity ValidityOf(X509* certificate);

// Why a certificate with `validity` cannot be served at `now`, or "" if it
// can: "expired at 2024-01-31T00:00:00Z (valid from ... until ...)" or "is
// not valid before ...". Clients refuse such a certificate, so serving it
// would fail every scrape. Pure.
std::string ValidityProblem(const TlsValidity& validity, int64_t now);

// Whether fewer than kTlsExpiryWarningSeconds are left at `now` (and the
// certificate is still valid). Pure.
bool ExpiresSoon(const TlsValidity& validity, int64_t now);

// What is left until notAfter, for a warning: "13 days", "1 day", "5
// hours", "less than an hour". Pure.
std::string TimeLeftText(const TlsValidity& validity, int64_t now);

// "2024-01-31T00:00:00Z". Pure.
std::string UtcText(int64_t unix_seconds);

// The wall clock, in unix seconds: certificates are judged by it.
int64_t UnixNowSeconds();

}  // namespace seatwatch::http
