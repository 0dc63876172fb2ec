#include "locks/query_text.h"

#include "locks/query_normalizer.h"

namespace seatwatch::locks {

namespace {

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

std::optional<std::string> ShownQueryText(QueryTextMode mode,
                                          const std::optional<std::string>& query,
                                          int max_characters) {
  if (mode == QueryTextMode::kNone || !query) return std::nullopt;
  std::string text = mode == QueryTextMode::kRaw ? *query : NormalizeQuery(*query);
  if (max_characters > 0) text = TruncateUtf8(std::move(text), static_cast<std::size_t>(max_characters));
  return text;
}

std::string TruncateUtf8(std::string text, std::size_t max_characters) {
  std::size_t characters = 0;
  int continuations = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    // A continuation byte belongs to the character before it (at most three
    // do; stray ones in malformed text count as characters of their own).
    if (i > 0 && IsContinuation(text[i]) && continuations < 3) {
      ++continuations;
      continue;
    }
    continuations = 0;
    if (characters == max_characters) {
      text.resize(i);
      break;
    }
    ++characters;
  }
  return text;
}

}  // namespace seatwatch::locks
