// A certificate's validity judged against a given time: refused outside
// notBefore..notAfter, warned about within 14 days of notAfter.
#include <gtest/gtest.h>

#include "http/tls_validity.h"

namespace seatwatch::http {
namespace {

// 2026-01-01T00:00:00Z to 2026-04-01T00:00:00Z.
constexpr TlsValidity kQuarter{1767225600, 1775001600};
constexpr int64_t kDay = 24 * 3600;

TEST(TlsValidityTest, UtcTextIsIso8601) {
  EXPECT_EQ(UtcText(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(UtcText(kQuarter.not_before), "2026-01-01T00:00:00Z");
  EXPECT_EQ(UtcText(kQuarter.not_after + 61), "2026-04-01T00:01:01Z");
}

TEST(TlsValidityTest, ServedOnlyBetweenNotBeforeAndNotAfter) {
  EXPECT_EQ(ValidityProblem(kQuarter, kQuarter.not_before), "");
  EXPECT_EQ(ValidityProblem(kQuarter, kQuarter.not_after), "");
  EXPECT_EQ(ValidityProblem(kQuarter, kQuarter.not_after + 1),
            "expired at 2026-04-01T00:00:00Z (valid from 2026-01-01T00:00:00Z until 2026-04-01T00:00:00Z)");
  EXPECT_EQ(ValidityProblem(kQuarter, kQuarter.not_before - 1),
            "is not valid before 2026-01-01T00:00:00Z (valid from 2026-01-01T00:00:00Z until "
            "2026-04-01T00:00:00Z)");
}

TEST(TlsValidityTest, ExpiresSoonWithinFourteenDays) {
  EXPECT_FALSE(ExpiresSoon(kQuarter, kQuarter.not_after - 14 * kDay));
  EXPECT_TRUE(ExpiresSoon(kQuarter, kQuarter.not_after - 14 * kDay + 1));
  EXPECT_TRUE(ExpiresSoon(kQuarter, kQuarter.not_after));
  // Expired or not yet valid is refused, not warned about.
  EXPECT_FALSE(ExpiresSoon(kQuarter, kQuarter.not_after + 1));
  EXPECT_FALSE(ExpiresSoon(TlsValidity{100, 200}, 50));
}

TEST(TlsValidityTest, TimeLeftInWholeDaysOrHours) {
  EXPECT_EQ(TimeLeftText(kQuarter, kQuarter.not_after - 13 * kDay - 5), "13 days");
  EXPECT_EQ(TimeLeftText(kQuarter, kQuarter.not_after - kDay), "1 day");
  EXPECT_EQ(TimeLeftText(kQuarter, kQuarter.not_after - 5 * 3600 - 10), "5 hours");
  EXPECT_EQ(TimeLeftText(kQuarter, kQuarter.not_after - 3600), "1 hour");
  EXPECT_EQ(TimeLeftText(kQuarter, kQuarter.not_after - 59), "less than an hour");
}

}  // namespace
}  // namespace seatwatch::http
