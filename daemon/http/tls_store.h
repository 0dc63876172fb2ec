#pragma once

#include <memory>
#include <mutex>

#include "http/tls_credentials.h"

namespace seatwatch::http {

// The credentials that new TLS handshakes get. Thread-safe: CivetWeb's
// workers read it during handshakes while a SIGHUP swaps it; a handshake
// already under way keeps what it took.
class TlsStore {
 public:
  explicit TlsStore(std::shared_ptr<const TlsCredentials> credentials)
      : credentials_(std::move(credentials)) {}

  std::shared_ptr<const TlsCredentials> Current() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return credentials_;
  }
  void Set(std::shared_ptr<const TlsCredentials> credentials) {
    std::lock_guard<std::mutex> lock(mutex_);
    credentials_ = std::move(credentials);
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const TlsCredentials> credentials_;
};

}  // namespace seatwatch::http
