#include "http/gzip_cache.h"

namespace seatwatch::http {

namespace {

// True if both pointers share one control block: the same part object, not a
// later one at a reused address.
bool SameOwner(const std::weak_ptr<const std::string>& a,
               const std::shared_ptr<const std::string>& b) {
  return !a.owner_before(b) && !b.owner_before(a);
}

}  // namespace

std::shared_ptr<const DeflatedPart> GzipPartCache::Deflate(const std::string& text) {
  ++deflations_;
  return std::make_shared<const DeflatedPart>(DeflatePart(text, level_));
}

std::shared_ptr<const DeflatedPart> GzipPartCache::Get(
    const std::shared_ptr<const std::string>& part) {
  if (part.use_count() == 1) return Deflate(*part);
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(part.get());
    if (it != entries_.end() && !it->second->part.expired() && SameOwner(it->second->part, part)) {
      entry = it->second;
    } else {
      SweepLocked();
      entry = std::make_shared<Entry>();
      entry->part = part;
      entries_[part.get()] = entry;
    }
  }
  // If the deflate throws, call_once lets the next caller try again.
  std::call_once(entry->once, [&] { entry->deflated = Deflate(*part); });
  return entry->deflated;
}

void GzipPartCache::SweepLocked() {
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = it->second->part.expired() ? entries_.erase(it) : std::next(it);
  }
}

std::size_t GzipPartCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

GzipPartCache& GzipPartCache::Shared() {
  static GzipPartCache* cache = new GzipPartCache();  // never destroyed: used until exit
  return *cache;
}

}  // namespace seatwatch::http
