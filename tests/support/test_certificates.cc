#include "support/test_certificates.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>

namespace seatwatch::testing {

namespace {

void Require(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test certificate: ") + what);
}

struct FileClose {
  void operator()(FILE* file) const { std::fclose(file); }
};

void WritePem(const std::string& path, const std::function<int(FILE*)>& write) {
  std::unique_ptr<FILE, FileClose> file(std::fopen(path.c_str(), "w"));
  Require(file != nullptr, "cannot open the output file");
  Require(write(file.get()) == 1, "cannot write PEM");
}

}  // namespace

void WriteCertificate(const std::string& dir, const std::string& name, long not_before_offset,
                      long not_after_offset, long serial) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  Require(key != nullptr, "cannot make a key");
  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
  Require(cert != nullptr, "out of memory");
  Require(X509_set_version(cert.get(), 2) == 1, "version");
  Require(ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial) == 1, "serial");
  Require(X509_gmtime_adj(X509_getm_notBefore(cert.get()), not_before_offset) != nullptr, "notBefore");
  Require(X509_gmtime_adj(X509_getm_notAfter(cert.get()), not_after_offset) != nullptr, "notAfter");
  X509_NAME* subject = X509_get_subject_name(cert.get());
  Require(X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                                     reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0) == 1,
          "subject");
  Require(X509_set_issuer_name(cert.get(), subject) == 1, "issuer");
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, cert.get(), cert.get(), nullptr, nullptr, 0);
  X509_EXTENSION* san = X509V3_EXT_conf_nid(nullptr, &context, NID_subject_alt_name, "IP:127.0.0.1");
  Require(san != nullptr, "subjectAltName");
  int added = X509_add_ext(cert.get(), san, -1);
  X509_EXTENSION_free(san);
  Require(added == 1, "subjectAltName");
  Require(X509_set_pubkey(cert.get(), key.get()) == 1, "public key");
  Require(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0, "signature");
  WritePem(dir + "/" + name + ".crt", [&](FILE* file) { return PEM_write_X509(file, cert.get()); });
  WritePem(dir + "/" + name + ".key", [&](FILE* file) {
    return PEM_write_PrivateKey(file, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
}

}  // namespace seatwatch::testing
