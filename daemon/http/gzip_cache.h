#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "http/gzip_member.h"

namespace seatwatch::http {

// Each body part deflated once per part object, however many scrapes serve
// it. A snapshot's parts are immutable strings that live as long as some
// snapshot holds them (a check's rendered text is shared by every snapshot
// until the check renders a new one), so the part's address is its identity
// while it lives. The cache holds a weak_ptr to the part: an entry whose part
// has died is stale, and a new part born at the same address is not mistaken
// for it (its control block differs). Stale entries are swept on insert.
//
// A part that only the caller's response holds (use_count() == 1) is made per
// request (the process metrics): no later request can present that object
// again, so it is deflated without being cached.
//
// Thread-safe. Two requests racing for one new part deflate it once: the
// second waits for the first's result (a per-entry once_flag, outside the
// map's lock, so other parts are not held up).
class GzipPartCache {
 public:
  explicit GzipPartCache(int level = kGzipLevel) : level_(level) {}

  std::shared_ptr<const DeflatedPart> Get(const std::shared_ptr<const std::string>& part);

  // Parts deflated so far (cached or not): for tests.
  std::size_t deflations() const { return deflations_.load(); }
  // Entries held now, stale ones included until the next sweep: for tests.
  std::size_t size() const;

  // The process-wide cache the HTTP server uses.
  static GzipPartCache& Shared();

 private:
  struct Entry {
    std::weak_ptr<const std::string> part;
    std::once_flag once;
    std::shared_ptr<const DeflatedPart> deflated;
  };

  std::shared_ptr<const DeflatedPart> Deflate(const std::string& text);
  void SweepLocked();

  const int level_;
  std::atomic<std::size_t> deflations_{0};
  mutable std::mutex mutex_;
  std::unordered_map<const std::string*, std::shared_ptr<Entry>> entries_;
};

}  // namespace seatwatch::http
