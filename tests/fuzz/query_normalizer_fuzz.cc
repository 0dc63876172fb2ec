// The query-text normalizer, on any bytes: it must never crash (it is total
// by contract), and a literal must never come out. Each input is used twice:
// as raw query text, and as SQL around a secret written as a literal of a
// random kind ('...', E'...', U&'...', $$...$$, $q$...$q$) that must not
// appear in the output. The text around the secret has its quote and dollar
// characters removed, so that it cannot end the literal early and turn the
// secret into a bare word that is rightly kept.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "locks/query_normalizer.h"

namespace {

std::string WithoutQuotes(std::string text) {
  std::string out;
  for (char c : text) {
    if (c != '\'' && c != '"' && c != '$') out += c;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using seatwatch::locks::NormalizeQuery;
  std::string raw(reinterpret_cast<const char*>(data), size);
  if (NormalizeQuery(raw) != NormalizeQuery(raw)) std::abort();

  FuzzedDataProvider in(data, size);
  static const char kAlnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string secret = "Zq";
  for (int i = 0; i < 10; ++i) secret += kAlnum[in.ConsumeIntegralInRange<size_t>(0, sizeof kAlnum - 2)];
  static const char* const kOpen[] = {"'", "E'", "U&'", "$$", "$q$", "N'"};
  static const char* const kClose[] = {"'", "'", "'", "$$", "$q$", "'"};
  size_t kind = in.ConsumeIntegralInRange<size_t>(0, 5);
  std::string prefix = WithoutQuotes(in.ConsumeRandomLengthString(200));
  std::string suffix = WithoutQuotes(in.ConsumeRemainingBytesAsString());
  if ((prefix + suffix).find(secret) != std::string::npos) return 0;  // the text says it anyway
  // The spaces keep the literal apart: "E$$x$$" is one identifier.
  std::string sql = prefix + " " + kOpen[kind] + secret + kClose[kind] + " " + suffix;
  std::string normalized = NormalizeQuery(sql);
  if (normalized.find(secret) != std::string::npos) {
    std::fprintf(stderr, "literal kept:\n  in:  %s\n  out: %s\n", sql.c_str(), normalized.c_str());
    std::abort();
  }
  return 0;
}
