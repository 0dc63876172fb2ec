#pragma once

#include <string>

typedef struct ssl_ctx_st SSL_CTX;

namespace seatwatch::http {

class TlsStore;

// TLS through CivetWeb's own OpenSSL support (a listening port with an "s"
// suffix). CivetWeb creates the SSL_CTX and hands it to its init_ssl
// callback, which calls ConfigureTlsContext.

// Throws std::runtime_error, saying what to install, if this CivetWeb has
// no TLS or cannot load OpenSSL. Debian's CivetWeb loads it at run time by
// the names "libssl.so" and "libcrypto.so", the unversioned links that only
// libssl-dev installs.
void RequireCivetWebTls();

// Sets up `context` so that every handshake takes the current certificate,
// key and chain (and client CAs) from `store` (SSL_CTX_set_cert_cb), refuses
// protocol versions below `min_version` (TLS1_2_VERSION or TLS1_3_VERSION),
// and resumes no session, so each new connection is checked against what
// the store holds now. `store` must outlive the context. Returns false (and
// logs why) if OpenSSL refuses a setting.
bool ConfigureTlsContext(SSL_CTX* context, TlsStore* store, int min_version);

}  // namespace seatwatch::http
