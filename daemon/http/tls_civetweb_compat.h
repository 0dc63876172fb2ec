#pragma once

namespace seatwatch::http {

// Whether CivetWeb will find SSL_get_peer_certificate where it looks for it
// (see tls_civetweb_compat.cc). Only the seatwatch executable is linked so
// that it does; elsewhere TLS would crash the process at its first
// connection, so Server::Start refuses it.
bool CivetWebFindsPeerCertificate();

}  // namespace seatwatch::http
