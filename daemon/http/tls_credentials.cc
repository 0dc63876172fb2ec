#include "http/tls_credentials.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <stdexcept>

namespace seatwatch::http {

namespace {

// OpenSSL's reason for the last failure, and the error queue emptied.
std::string OpenSslReason() {
  unsigned long code = ERR_peek_last_error();
  std::string reason;
  if (code != 0) {
    char text[256];
    ERR_error_string_n(code, text, sizeof text);
    reason = text;
  }
  ERR_clear_error();
  return reason;
}

using Part = TlsCredentialsError::Part;

[[noreturn]] void Fail(Part part, const std::string& what) {
  std::string reason = OpenSslReason();
  throw TlsCredentialsError(part, reason.empty() ? what : what + " (" + reason + ")");
}

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using Bio = std::unique_ptr<BIO, BioFree>;

Bio MemoryBio(const std::string& text, Part part) {
  Bio bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  if (!bio) Fail(part, "out of memory");
  return bio;
}

// A key with a passphrase is refused rather than prompting on a terminal.
int NoPassphrase(char*, int, int, void*) { return -1; }

// Every certificate in `pem`, in order; an empty list if there is none.
std::vector<X509*> ReadCertificates(const std::string& pem, Part part) {
  std::vector<X509*> out;
  Bio bio = MemoryBio(pem, part);
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr)) out.push_back(cert);
  // The loop ends with "no start line" at the end of the text: not an error.
  unsigned long last = ERR_peek_last_error();
  if (last != 0 && ERR_GET_REASON(last) != PEM_R_NO_START_LINE) {
    for (X509* cert : out) X509_free(cert);
    Fail(part, "a certificate in it is not valid PEM");
  }
  ERR_clear_error();
  return out;
}

std::string SerialOf(X509* cert) {
  BIGNUM* number = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr);
  if (!number) return "";
  char* hex = BN_bn2hex(number);
  std::string out = hex ? hex : "";
  OPENSSL_free(hex);
  BN_free(number);
  return out;
}

std::string SubjectOf(X509* cert) {
  char text[512];
  X509_NAME_oneline(X509_get_subject_name(cert), text, sizeof text);
  return text;
}

std::string TimeOf(const ASN1_TIME* time) {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || ASN1_TIME_print(bio.get(), time) != 1) return "";
  char* data = nullptr;
  long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(length));
}

}  // namespace

TlsCredentials::~TlsCredentials() {
  X509_free(certificate_);
  EVP_PKEY_free(key_);
  sk_X509_pop_free(chain_, X509_free);
  X509_STORE_free(client_ca_store_);
  for (X509* cert : client_cas_) X509_free(cert);
}

std::shared_ptr<const TlsCredentials> ParseTlsCredentials(const std::string& certificate_pem,
                                                          const std::string& key_pem,
                                                          const std::string& client_ca_pem) {
  std::shared_ptr<TlsCredentials> out(new TlsCredentials());
  std::vector<X509*> certificates = ReadCertificates(certificate_pem, Part::kCertificate);
  if (certificates.empty()) Fail(Part::kCertificate, "holds no PEM certificate");
  out->certificate_ = certificates[0];
  out->chain_ = sk_X509_new_null();
  if (!out->chain_) Fail(Part::kCertificate, "out of memory");
  for (size_t i = 1; i < certificates.size(); ++i) {
    if (!sk_X509_push(out->chain_, certificates[i])) {
      for (size_t j = i; j < certificates.size(); ++j) X509_free(certificates[j]);
      Fail(Part::kCertificate, "out of memory");
    }
  }

  Bio key_bio = MemoryBio(key_pem, Part::kKey);
  out->key_ = PEM_read_bio_PrivateKey(key_bio.get(), nullptr, NoPassphrase, nullptr);
  if (!out->key_) Fail(Part::kKey, "holds no unencrypted PEM private key");
  if (X509_check_private_key(out->certificate_, out->key_) != 1) {
    Fail(Part::kKey, "does not match the certificate");
  }

  if (!client_ca_pem.empty()) {
    out->client_cas_ = ReadCertificates(client_ca_pem, Part::kClientCa);
    if (out->client_cas_.empty()) Fail(Part::kClientCa, "holds no PEM certificate");
    out->client_ca_store_ = X509_STORE_new();
    if (!out->client_ca_store_) Fail(Part::kClientCa, "out of memory");
    for (X509* ca : out->client_cas_) {
      if (X509_STORE_add_cert(out->client_ca_store_, ca) != 1) Fail(Part::kClientCa, "cannot use a CA certificate");
    }
  }
  out->serial_ = SerialOf(out->certificate_);
  out->subject_ = SubjectOf(out->certificate_);
  out->not_after_ = TimeOf(X509_get0_notAfter(out->certificate_));
  try {
    out->validity_ = ValidityOf(out->certificate_);
  } catch (const std::runtime_error& e) {
    Fail(Part::kCertificate, e.what());
  }
  return out;
}

}  // namespace seatwatch::http
