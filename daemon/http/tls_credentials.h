#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "http/tls_validity.h"

typedef struct x509_st X509;
typedef struct evp_pkey_st EVP_PKEY;
typedef struct x509_store_st X509_STORE;
struct stack_st_X509;

namespace seatwatch::http {

// What one TLS handshake is served with: the certificate, its key, the
// intermediates after it in the certificate file, and optionally the CAs
// that client certificates must chain to. Immutable once built, so any
// number of handshakes may use one at a time (OpenSSL reference-counts what
// they take from it). Built only by ParseTlsCredentials.
class TlsCredentials {
 public:
  ~TlsCredentials();
  TlsCredentials(const TlsCredentials&) = delete;
  TlsCredentials& operator=(const TlsCredentials&) = delete;

  X509* certificate() const { return certificate_; }
  EVP_PKEY* key() const { return key_; }
  stack_st_X509* chain() const { return chain_; }
  // Null when client certificates are not asked for.
  X509_STORE* client_ca_store() const { return client_ca_store_; }
  const std::vector<X509*>& client_cas() const { return client_cas_; }

  // For logs: the serial in hex, the subject and the end of validity.
  const std::string& serial() const { return serial_; }
  const std::string& subject() const { return subject_; }
  const std::string& not_after() const { return not_after_; }
  // notBefore and notAfter as unix seconds, to judge and export them.
  const TlsValidity& validity() const { return validity_; }

 private:
  friend std::shared_ptr<const TlsCredentials> ParseTlsCredentials(const std::string&, const std::string&,
                                                                    const std::string&);
  TlsCredentials() = default;

  X509* certificate_ = nullptr;
  EVP_PKEY* key_ = nullptr;
  stack_st_X509* chain_ = nullptr;
  X509_STORE* client_ca_store_ = nullptr;
  std::vector<X509*> client_cas_;
  std::string serial_;
  std::string subject_;
  std::string not_after_;
  TlsValidity validity_;
};

// Which input a TlsCredentialsError is about, so that a config error names
// the right key.
class TlsCredentialsError : public std::runtime_error {
 public:
  enum class Part { kCertificate, kKey, kClientCa };
  TlsCredentialsError(Part part, const std::string& what) : std::runtime_error(what), part_(part) {}
  Part part() const { return part_; }

 private:
  Part part_;
};

// Builds credentials from PEM text: `certificate_pem` holds the server
// certificate first, then any intermediates; `key_pem` its unencrypted
// private key; `client_ca_pem` (may be empty) one or more CA certificates.
// Throws TlsCredentialsError saying what is wrong ("holds no PEM
// certificate", "does not match the certificate", OpenSSL's reason). Whether
// the certificate is valid now is not judged here (ValidityProblem is).
std::shared_ptr<const TlsCredentials> ParseTlsCredentials(const std::string& certificate_pem,
                                                          const std::string& key_pem,
                                                          const std::string& client_ca_pem);

}  // namespace seatwatch::http
