#include "metrics/keyed_text_parts.h"

#include <iterator>

namespace seatwatch::metrics {

std::map<std::string, KeyedTextParts::Part>::iterator KeyedTextParts::PartOf(
    const std::string& key) {
  return std::prev(parts_.upper_bound(key));
}

void KeyedTextParts::Set(const std::string& key, std::string text) {
  auto it = texts_.find(key);
  if (it != texts_.end()) {
    if (it->second == text) return;
    if (it->second.empty()) ++with_text_;
    if (text.empty()) --with_text_;
    it->second = std::move(text);
  } else {
    if (!text.empty()) ++with_text_;
    texts_.emplace(key, std::move(text));
  }
  PartOf(key)->second.dirty = true;
}

void KeyedTextParts::Erase(const std::string& key) {
  auto it = texts_.find(key);
  if (it == texts_.end()) return;
  if (!it->second.empty()) --with_text_;
  texts_.erase(it);
  PartOf(key)->second.dirty = true;
}

std::map<std::string, KeyedTextParts::Part>::iterator KeyedTextParts::Build(
    std::map<std::string, Part>::iterator part) {
  auto next = std::next(part);
  auto first = texts_.lower_bound(part->first);
  auto last = next == parts_.end() ? texts_.end() : texts_.lower_bound(next->first);
  std::size_t count = static_cast<std::size_t>(std::distance(first, last));
  if (count == 0 && part != parts_.begin()) return parts_.erase(part);
  if (count > 2 * kKeysPerPart) {
    // Split: a new part starts at every kKeysPerPart-th key; each is built
    // in turn by the caller's walk, as it is dirty.
    auto key = first;
    for (std::size_t i = 0; i + kKeysPerPart < count; i += kKeysPerPart) {
      std::advance(key, kKeysPerPart);
      parts_.emplace(key->first, Part{});
    }
    next = std::next(part);
    last = texts_.lower_bound(next->first);
  }
  std::string text;
  for (auto it = first; it != last; ++it) text += it->second;
  part->second.dirty = false;
  if (!part->second.text || *part->second.text != text) {
    part->second.text = std::make_shared<const std::string>(std::move(text));
    ++builds_;
  }
  return next;
}

std::vector<std::shared_ptr<const std::string>> KeyedTextParts::Parts() {
  for (auto it = parts_.begin(); it != parts_.end();) {
    it = it->second.dirty ? Build(it) : std::next(it);
  }
  std::vector<std::shared_ptr<const std::string>> out;
  out.reserve(parts_.size());
  for (const auto& [first_key, part] : parts_) {
    if (part.text && !part.text->empty()) out.push_back(part.text);
  }
  return out;
}

}  // namespace seatwatch::metrics
