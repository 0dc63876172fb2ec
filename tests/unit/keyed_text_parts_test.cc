#include "metrics/keyed_text_parts.h"

#include <gtest/gtest.h>

#include <set>

namespace seatwatch::metrics {
namespace {

std::string Text(const std::vector<std::shared_ptr<const std::string>>& parts) {
  std::string text;
  for (const auto& part : parts) text += *part;
  return text;
}

// Keys "k0000".."k<n-1>", each with one sample line naming it.
std::string Key(int i) {
  char key[16];
  std::snprintf(key, sizeof key, "k%04d", i);
  return key;
}
std::string Line(int i, int value = 1) { return "m{key=\"" + Key(i) + "\"} " + std::to_string(value) + "\n"; }

std::string Expected(int n, int changed = -1, int value = 1) {
  std::string text;
  for (int i = 0; i < n; ++i) text += Line(i, i == changed ? value : 1);
  return text;
}

TEST(KeyedTextPartsTest, JoinsInKeyOrderAndSplitsIntoPartsOfAboutKeysPerPart) {
  KeyedTextParts parts;
  for (int i = 999; i >= 0; --i) parts.Set(Key(i), Line(i));
  auto built = parts.Parts();
  EXPECT_EQ(Text(built), Expected(1000));
  // 1,000 keys: seven parts of 128, then one of 104.
  ASSERT_EQ(built.size(), 8u);
  EXPECT_EQ(*built[0], [] {
    std::string text;
    for (int i = 0; i < 128; ++i) text += Line(i);
    return text;
  }());
  EXPECT_EQ(built[7]->size(), 104 * Line(0).size());
}

TEST(KeyedTextPartsTest, AChangedKeyRebuildsOnlyItsPartTheOthersAreTheSameObjects) {
  KeyedTextParts parts;
  for (int i = 0; i < 1000; ++i) parts.Set(Key(i), Line(i));
  auto before = parts.Parts();
  std::size_t builds = parts.builds();
  parts.Set(Key(300), Line(300, 7));  // in the third part (256..383)
  auto after = parts.Parts();
  EXPECT_EQ(Text(after), Expected(1000, 300, 7));
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < after.size(); ++i) {
    if (i == 2) {
      EXPECT_NE(after[i].get(), before[i].get());
    } else {
      EXPECT_EQ(after[i].get(), before[i].get()) << "part " << i;
    }
  }
  EXPECT_EQ(parts.builds(), builds + 1);
}

TEST(KeyedTextPartsTest, SettingTheSameTextAgainRebuildsNothing) {
  KeyedTextParts parts;
  for (int i = 0; i < 500; ++i) parts.Set(Key(i), Line(i));
  auto before = parts.Parts();
  std::size_t builds = parts.builds();
  // A full pass that found every key as it was.
  std::set<std::string> keys;
  for (int i = 0; i < 500; ++i) {
    parts.Set(Key(i), Line(i));
    keys.insert(Key(i));
  }
  parts.EraseAllBut(keys);
  EXPECT_EQ(parts.Parts(), before);
  EXPECT_EQ(parts.builds(), builds);
}

TEST(KeyedTextPartsTest, AKeyChangedAndChangedBackKeepsItsPartsObject) {
  KeyedTextParts parts;
  for (int i = 0; i < 300; ++i) parts.Set(Key(i), Line(i));
  auto before = parts.Parts();
  parts.Set(Key(5), Line(5, 2));
  parts.Set(Key(5), Line(5));
  EXPECT_EQ(parts.Parts(), before);
}

TEST(KeyedTextPartsTest, ErasedKeysLeaveTheTextAndAnEmptiedPartGoes) {
  KeyedTextParts parts;
  for (int i = 0; i < 1000; ++i) parts.Set(Key(i), Line(i));
  ASSERT_EQ(parts.Parts().size(), 8u);
  std::string expected;
  for (int i = 0; i < 1000; ++i) {
    if (i >= 128 && i < 256) {
      parts.Erase(Key(i));
    } else {
      expected += Line(i);
    }
  }
  auto after = parts.Parts();
  EXPECT_EQ(Text(after), expected);
  EXPECT_EQ(after.size(), 7u);
  EXPECT_EQ(parts.keys(), 872u);
  // A key back in the emptied range lands in the part before it.
  parts.Set(Key(200), Line(200));
  after = parts.Parts();
  EXPECT_EQ(after.size(), 7u);
  EXPECT_NE(after[0]->find(Key(200)), std::string::npos);
}

TEST(KeyedTextPartsTest, KeysAppendedAtTheEndSplitTheLastPart) {
  KeyedTextParts parts;
  for (int i = 0; i < 256; ++i) parts.Set(Key(i), Line(i));
  auto before = parts.Parts();
  ASSERT_EQ(before.size(), 1u);  // up to twice kKeysPerPart stay one part
  for (int i = 256; i < 2000; ++i) parts.Set(Key(i), Line(i));
  auto after = parts.Parts();
  EXPECT_EQ(Text(after), Expected(2000));
  for (const auto& part : after) {
    EXPECT_LE(part->size(), 2 * KeyedTextParts::kKeysPerPart * Line(0).size());
  }
}

TEST(KeyedTextPartsTest, KeysWithoutSamplesAreEmpty) {
  KeyedTextParts parts;
  EXPECT_TRUE(parts.empty());
  parts.Set("a", "");
  parts.Set("b", "");
  EXPECT_TRUE(parts.empty());
  EXPECT_TRUE(parts.Parts().empty());
  parts.Set("b", "m 1\n");
  EXPECT_FALSE(parts.empty());
  EXPECT_EQ(Text(parts.Parts()), "m 1\n");
  parts.Set("b", "");
  EXPECT_TRUE(parts.empty());
  parts.Set("a", "m 2\n");
  parts.Erase("a");
  EXPECT_TRUE(parts.empty());
  EXPECT_TRUE(parts.Parts().empty());
}

}  // namespace
}  // namespace seatwatch::metrics
