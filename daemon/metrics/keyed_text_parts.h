#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace seatwatch::metrics {

// One family's samples kept per key and published as parts of about
// kKeysPerPart consecutive keys (in key order, the order a full render
// writes them), so that a run that changed a few keys rebuilds only the
// parts holding them: an unchanged part is the same string object as before,
// which the snapshot shares and the gzip cache deflated once (see
// http::GzipPartCache). At 20M seats the inventory is 140,000 samples in
// about 160 parts of 60 kB; an incremental recheck of a few events rebuilds
// a few of them.
//
// A part's keys are those from its first key up to the next part's: a key
// lands in the part whose range holds it, a part that grows past twice
// kKeysPerPart is split, an empty one goes. A rebuilt part whose text came
// out the same (a full pass that changed nothing) keeps its old object.
// Pure; single-threaded.
class KeyedTextParts {
 public:
  static constexpr std::size_t kKeysPerPart = 128;

  // A key's samples; an empty text is a key without any.
  void Set(const std::string& key, std::string text);
  void Erase(const std::string& key);
  // Erases every key not in `keep` (a full render's keys).
  template <typename KeySet>
  void EraseAllBut(const KeySet& keep) {
    std::vector<std::string> gone;
    for (const auto& [key, text] : texts_) {
      if (keep.count(key) == 0) gone.push_back(key);
    }
    for (const auto& key : gone) Erase(key);
  }

  // The non-empty parts, in key order.
  std::vector<std::shared_ptr<const std::string>> Parts();

  // True while no key has samples.
  bool empty() const { return with_text_ == 0; }
  std::size_t keys() const { return texts_.size(); }
  // Parts built as new objects so far: for tests.
  std::size_t builds() const { return builds_; }

 private:
  struct Part {
    std::shared_ptr<const std::string> text;  // null before its first build
    bool dirty = true;
  };
  // The part whose range holds `key`.
  std::map<std::string, Part>::iterator PartOf(const std::string& key);
  // Builds a dirty part (splitting it first if it grew too big, dropping
  // it if it is empty); returns the part after it.
  std::map<std::string, Part>::iterator Build(std::map<std::string, Part>::iterator part);

  std::map<std::string, std::string> texts_;
  std::size_t with_text_ = 0;
  // By each part's first key; the first part's is "", below every key.
  std::map<std::string, Part> parts_{{"", Part{}}};
  std::size_t builds_ = 0;
};

}  // namespace seatwatch::metrics
