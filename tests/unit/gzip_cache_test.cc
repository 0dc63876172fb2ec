// The per-part cache: a part object is deflated once, however many bodies
// and threads ask for it; a new part at a freed one's address is not
// confused with it.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "http/gzip_body.h"
#include "http/gzip_cache.h"

namespace seatwatch {
namespace {

using http::GzipPartCache;

std::shared_ptr<const std::string> Part(std::string text) {
  return std::make_shared<const std::string>(std::move(text));
}

std::string BigText(char c) {
  std::string text;
  for (int i = 0; i < 20000; ++i) {
    text += std::string("series{k=\"") + c + "\"} " + std::to_string(i) + "\n";
  }
  return text;
}

TEST(GzipCacheTest, SamePartObjectIsDeflatedOnce) {
  GzipPartCache cache;
  auto held = Part("kept 1\n");  // held here, as a snapshot holds its parts
  std::vector<std::shared_ptr<const std::string>> parts = {held};
  auto first = http::EncodeGzip(parts, cache);
  auto second = http::EncodeGzip(parts, cache);
  EXPECT_EQ(cache.deflations(), 1u);
  // The very same deflated bytes, shared rather than copied.
  EXPECT_EQ(first.pieces[1].get(), second.pieces[1].get());
}

TEST(GzipCacheTest, EqualTextInAnotherObjectIsDeflatedAgain) {
  GzipPartCache cache;
  auto a = Part("same 1\n"), b = Part("same 1\n");
  auto keep_a = a, keep_b = b;
  cache.Get(a);
  cache.Get(b);
  EXPECT_EQ(cache.deflations(), 2u);
}

TEST(GzipCacheTest, PartOnlyTheResponseHoldsIsNotCached) {
  GzipPartCache cache;
  cache.Get(Part("per request 1\n"));
  cache.Get(Part("per request 2\n"));
  EXPECT_EQ(cache.deflations(), 2u);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(GzipCacheTest, AliasedPartIsCachedByTheOwnersLife) {
  // The JSON documents are handed out aliased to the snapshot that owns them.
  struct Owner { std::string text = "owned 1\n"; };
  GzipPartCache cache;
  auto owner = std::make_shared<Owner>();
  std::shared_ptr<const std::string> alias(owner, &owner->text);
  cache.Get(alias);
  cache.Get(std::shared_ptr<const std::string>(owner, &owner->text));
  EXPECT_EQ(cache.deflations(), 1u);
}

TEST(GzipCacheTest, FreedPartsAreSweptAndANewPartIsNeverTakenForAnOldOne) {
  GzipPartCache cache;
  const std::string* old_address = nullptr;
  // Allocated apart from their control blocks (not make_shared), so a dead
  // part's memory is freed while the cache's weak_ptr still holds the block.
  auto separate = [](const char* text) {
    return std::shared_ptr<const std::string>(new std::string(text));
  };
  {
    auto part = separate("old 1\n");
    auto hold = part;
    old_address = part.get();
    EXPECT_EQ(cache.Get(part)->length, 6u);
  }
  EXPECT_EQ(cache.size(), 1u);
  // Allocate until a new part lands where the old one was (the allocator
  // usually hands the same block straight back), then check it is deflated
  // from its own text.
  std::vector<std::shared_ptr<const std::string>> keep;
  bool reused = false;
  for (int i = 0; i < 64 && !reused; ++i) {
    keep.push_back(separate("new text 22\n"));
    reused = keep.back().get() == old_address;
  }
  auto newest = keep.back();
  auto deflated = cache.Get(newest);
  EXPECT_EQ(deflated->length, newest->size());
  // The stale entry went in the sweep of that insert.
  EXPECT_EQ(cache.size(), 1u);
  if (!reused) GTEST_LOG_(INFO) << "the allocator did not reuse the address; sweep checked only";
}

TEST(GzipCacheTest, RacingRequestsDeflateAPartOnce) {
  GzipPartCache cache;
  // The snapshot holds the parts; each request's response holds copies.
  const std::vector<std::shared_ptr<const std::string>> snapshot = {Part(BigText('a')),
                                                                    Part(BigText('b'))};
  std::vector<std::thread> threads;
  std::vector<std::size_t> lengths(8);
  for (size_t t = 0; t < lengths.size(); ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::shared_ptr<const std::string>> response = snapshot;
      lengths[t] = http::EncodeGzip(response, cache).length;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(cache.deflations(), 2u);
  for (auto length : lengths) EXPECT_EQ(length, lengths[0]);
}

}  // namespace
}  // namespace seatwatch
