#include "http/tls_validity.h"

#include <openssl/asn1.h>
#include <openssl/x509.h>

#include <chrono>
#include <ctime>
#include <stdexcept>

namespace seatwatch::http {

namespace {

int64_t UnixOf(const ASN1_TIME* time, const char* which) {
  std::tm parts{};
  if (!time || ASN1_TIME_to_tm(time, &parts) != 1) {
    throw std::runtime_error(std::string("cannot read the certificate's ") + which);
  }
  return static_cast<int64_t>(timegm(&parts));
}

std::string Range(const TlsValidity& validity) {
  return "valid from " + UtcText(validity.not_before) + " until " + UtcText(validity.not_after);
}

}  // namespace

TlsValidity ValidityOf(X509* certificate) {
  TlsValidity validity;
  validity.not_before = UnixOf(X509_get0_notBefore(certificate), "notBefore");
  validity.not_after = UnixOf(X509_get0_notAfter(certificate), "notAfter");
  return validity;
}

std::string ValidityProblem(const TlsValidity& validity, int64_t now) {
  if (now > validity.not_after) {
    return "expired at " + UtcText(validity.not_after) + " (" + Range(validity) + ")";
  }
  if (now < validity.not_before) {
    return "is not valid before " + UtcText(validity.not_before) + " (" + Range(validity) + ")";
  }
  return "";
}

bool ExpiresSoon(const TlsValidity& validity, int64_t now) {
  return ValidityProblem(validity, now).empty() && validity.not_after - now < kTlsExpiryWarningSeconds;
}

std::string TimeLeftText(const TlsValidity& validity, int64_t now) {
  int64_t left = validity.not_after - now;
  auto count = [](int64_t n, const char* unit) {
    return std::to_string(n) + " " + unit + (n == 1 ? "" : "s");
  };
  if (left >= 24 * 3600) return count(left / (24 * 3600), "day");
  if (left >= 3600) return count(left / 3600, "hour");
  return "less than an hour";
}

std::string UtcText(int64_t unix_seconds) {
  std::time_t time = static_cast<std::time_t>(unix_seconds);
  std::tm parts{};
  gmtime_r(&time, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

int64_t UnixNowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace seatwatch::http
