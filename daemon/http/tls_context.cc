#include "http/tls_context.h"

#include <civetweb.h>
#include <dlfcn.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstdint>
#include <stdexcept>

#include "http/tls_civetweb_compat.h"
#include "http/tls_store.h"
#include "util/log.h"

namespace seatwatch::http {

namespace {

// Runs in the handshake, on CivetWeb's worker thread, once the ClientHello
// is read: before the server sends its certificate and before it asks for
// the client's, so everything set here applies to this connection.
int ServeCurrentCertificate(SSL* ssl, void* arg) {
  auto credentials = static_cast<TlsStore*>(arg)->Current();
  if (!credentials) return 0;
  if (SSL_use_cert_and_key(ssl, credentials->certificate(), credentials->key(), credentials->chain(), 1) != 1) {
    return 0;
  }
  if (credentials->client_ca_store()) {
    SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    if (SSL_set1_verify_cert_store(ssl, credentials->client_ca_store()) != 1) return 0;
    // The CAs' names go in the CertificateRequest, so that a client with
    // several certificates picks the right one.
    for (X509* ca : credentials->client_cas()) SSL_add_client_CA(ssl, ca);
  } else {
    SSL_set_verify(ssl, SSL_VERIFY_NONE, nullptr);
  }
  return 1;
}

}  // namespace

void RequireCivetWebTls() {
  if ((mg_check_feature(MG_FEATURES_TLS) & MG_FEATURES_TLS) == 0) {
    throw std::runtime_error("this build of CivetWeb has no TLS support");
  }
  // Without the libraries CivetWeb fails in mg_start with a bare "Error
  // initializing SSL context"; the same dlopen here names cause and remedy.
  std::string why;
  for (const char* name : {"libssl.so", "libcrypto.so"}) {
    void* handle = dlopen(name, RTLD_NOW);
    if (handle) {
      dlclose(handle);
      continue;
    }
    const char* error = dlerror();
    why += std::string(why.empty() ? "" : "; ") + (error ? error : name);
  }
  if (why.empty() && !CivetWebFindsPeerCertificate()) {
    throw std::runtime_error(
        "this program cannot serve TLS through CivetWeb: CivetWeb needs SSL_get_peer_certificate, "
        "which OpenSSL 3 does not export, and only the seatwatch executable provides it "
        "(see http/tls_civetweb_compat.cc)");
  }
  if (why.empty()) {
    // mg_start sets up no TLS context unless the library was initialized
    // with the TLS bit (mg_init_library may be called again for that). Its
    // result is no test: Debian's 1.15 returns 0 here even when OpenSSL
    // loaded and TLS then works.
    static const bool initialized = (mg_init_library(MG_FEATURES_TLS), true);
    (void)initialized;
    return;
  }
  throw std::runtime_error(
      "CivetWeb cannot load OpenSSL, which it opens at run time as libssl.so and libcrypto.so "
      "(on Debian: apt install libssl-dev): " +
      why);
}

bool ConfigureTlsContext(SSL_CTX* context, TlsStore* store, int min_version) {
  if (SSL_CTX_set_min_proto_version(context, min_version) != 1) {
    log::Error("cannot set the minimum TLS version");
    return false;
  }
  // CivetWeb (built against OpenSSL 1.1's constants) has set option bits
  // that mean other things in OpenSSL 3: no extended master secret, client
  // renegotiation allowed, kTLS, no CA names in a CertificateRequest (which
  // Go's TLS, Prometheus's, refuses as malformed). Start from none: OpenSSL
  // 3's own workarounds, no compression, no renegotiation.
  SSL_CTX_clear_options(context, ~static_cast<uint64_t>(0));
  // No resumption (no tickets, no cache): a resumed session skips the
  // certificate callback, so it would keep an old certificate and an old
  // client-CA verdict across a reload. Scrapers keep their connections
  // alive; full handshakes are few.
  SSL_CTX_set_options(context, SSL_OP_ALL | SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                                   SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_TICKET);
  SSL_CTX_set_session_cache_mode(context, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_num_tickets(context, 0);
  SSL_CTX_set_cert_cb(context, &ServeCurrentCertificate, store);
  return true;
}

}  // namespace seatwatch::http
