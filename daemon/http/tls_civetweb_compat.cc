// Debian's CivetWeb 1.15 is built for the OpenSSL 1.1 API and loads OpenSSL
// itself: dlopen("libssl.so"), then dlsym for each function it uses. One of
// them, SSL_get_peer_certificate, is only a macro in OpenSSL 3 (for
// SSL_get1_peer_certificate), so libssl.so.3 does not export it; CivetWeb
// leaves the pointer null and calls it for every TLS connection, and the
// process dies at the first handshake (upstream: civetweb issue #1334).
//
// The seatwatch executable answers for it: it is linked with the soname
// "libssl.so" (so dlopen("libssl.so") returns the executable itself, already
// loaded, instead of opening libssl.so.3) and exports the function below.
// dlsym on the executable's handle then finds SSL_get_peer_certificate here
// and every other libssl function in libssl.so.3, which the executable links
// directly: one OpenSSL in the process, as before. See daemon/CMakeLists.txt.
#include "http/tls_civetweb_compat.h"

#include <dlfcn.h>
#include <openssl/ssl.h>

#undef SSL_get_peer_certificate

extern "C" __attribute__((visibility("default"))) X509* SSL_get_peer_certificate(const SSL* ssl) {
  // Both return a new reference, which CivetWeb frees.
  return SSL_get1_peer_certificate(ssl);
}

namespace seatwatch::http {

bool CivetWebFindsPeerCertificate() {
  void* handle = dlopen("libssl.so", RTLD_NOW);
  if (!handle) return false;
  bool found = dlsym(handle, "SSL_get_peer_certificate") != nullptr;
  dlclose(handle);
  return found;
}

}  // namespace seatwatch::http
