// One gzip member from parts deflated on their own: what zlib's inflate
// (the decoder Prometheus' Go client mirrors) makes of it.
#include <gtest/gtest.h>
#include <zlib.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "http/gzip_body.h"
#include "http/gzip_member.h"
#include "support/gunzip.h"

namespace seatwatch {
namespace {

using http::GzipPartCache;
using testing::Gunzip;

std::string Join(const std::vector<std::shared_ptr<const std::string>>& pieces) {
  std::string out;
  for (const auto& piece : pieces) out += *piece;
  return out;
}

std::shared_ptr<const std::string> Part(std::string text) {
  return std::make_shared<const std::string>(std::move(text));
}

// Exposition-like text: repetitive names and labels, varying values.
std::string MetricsText(int series, unsigned seed) {
  std::mt19937 random(seed);
  std::string text = "# HELP inventory Seats by kind.\n# TYPE inventory gauge\n";
  for (int i = 0; i < series; ++i) {
    text += "inventory{event_id=\"" + std::to_string(i) + "\",kind=\"seats_free\"} " +
            std::to_string(random() % 1000) + "\n";
  }
  return text;
}

std::string Encode(const std::vector<std::shared_ptr<const std::string>>& parts) {
  GzipPartCache cache;
  auto body = http::EncodeGzip(parts, cache);
  std::string member = Join(body.pieces);
  EXPECT_EQ(member.size(), body.length);
  return member;
}

TEST(GzipMemberTest, HeaderIsTheFixedTenBytes) {
  const std::string& header = http::GzipHeader();
  ASSERT_EQ(header.size(), 10u);
  EXPECT_EQ(static_cast<unsigned char>(header[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(header[1]), 0x8b);
  EXPECT_EQ(header[2], 8);  // deflate
  EXPECT_EQ(header[3], 0);  // no flags: no name, no extra field
}

TEST(GzipMemberTest, PartsJoinedInflateToTheConcatenatedText) {
  std::vector<std::shared_ptr<const std::string>> parts = {
      Part(MetricsText(300, 1)), Part("up 1\n"), Part(MetricsText(50, 2))};
  std::string member = Encode(parts);
  EXPECT_EQ(Gunzip(member), Join(parts));
  EXPECT_LT(member.size(), Join(parts).size() / 4);
}

TEST(GzipMemberTest, TrailerCarriesCrcAndLengthOfTheWhole) {
  std::vector<std::shared_ptr<const std::string>> parts = {Part("alpha 1\n"), Part("beta 2\n")};
  std::string whole = Join(parts);
  std::string member = Encode(parts);
  ASSERT_GE(member.size(), 18u);
  auto le32 = [&](size_t at) {
    std::uint32_t value = 0;
    for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(member[at + i]);
    return value;
  };
  std::uint32_t crc = static_cast<std::uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(whole.data()), static_cast<uInt>(whole.size())));
  EXPECT_EQ(le32(member.size() - 8), crc);
  EXPECT_EQ(le32(member.size() - 4), whole.size());
  // The last block before the trailer is the final empty one: 0x03 0x00.
  EXPECT_EQ(member.substr(member.size() - 10, 2), std::string("\x03\x00", 2));
}

TEST(GzipMemberTest, CombinedCrcEqualsTheCrcOfTheConcatenation) {
  std::string a = MetricsText(10, 3), b = MetricsText(20, 4);
  auto crc = [](const std::string& s) {
    return static_cast<std::uint32_t>(
        crc32(0L, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
  };
  EXPECT_EQ(http::CombineCrc(crc(a), crc(b), b.size()), crc(a + b));
  EXPECT_EQ(http::CombineCrc(0, crc(b), b.size()), crc(b));
}

TEST(GzipMemberTest, EmptyPartsAndAnEmptyBody) {
  EXPECT_EQ(Gunzip(Encode({})), "");
  EXPECT_EQ(Gunzip(Encode({Part(""), Part("")})), "");
  std::vector<std::shared_ptr<const std::string>> parts = {Part(""), Part("a 1\n"), Part(""),
                                                           Part("b 2\n"), Part("")};
  EXPECT_EQ(Gunzip(Encode(parts)), "a 1\nb 2\n");
  EXPECT_TRUE(http::DeflatePart("").bytes.empty());
}

TEST(GzipMemberTest, ManyParts) {
  std::vector<std::shared_ptr<const std::string>> parts;
  for (int i = 0; i < 500; ++i) parts.push_back(Part("part " + std::to_string(i) + "\n"));
  EXPECT_EQ(Gunzip(Encode(parts)), Join(parts));
}

TEST(GzipMemberTest, BigPartBeyondOneOutputBuffer) {
  // About 8 MB, some of it incompressible (random bytes), so the deflated
  // output outgrows any first guess at its size.
  std::string text = MetricsText(150000, 5);
  std::mt19937 random(6);
  for (int i = 0; i < 1 << 20; ++i) text.push_back(static_cast<char>(random()));
  std::vector<std::shared_ptr<const std::string>> parts = {Part(text), Part("tail 1\n")};
  EXPECT_EQ(Gunzip(Encode(parts)), Join(parts));
}

TEST(GzipMemberTest, EveryLevelDecodesTheSame) {
  std::string text = MetricsText(1000, 7);
  for (int level : {1, 6, 9}) {
    http::DeflatedPart part = http::DeflatePart(text, level);
    std::string member = http::GzipHeader() + part.bytes + http::GzipTrailer(part.crc, part.length);
    EXPECT_EQ(Gunzip(member), text) << "level " << level;
  }
}

}  // namespace
}  // namespace seatwatch
