#include "changes/drain_cost_policy.h"

#include <gtest/gtest.h>

namespace seatwatch::changes {
namespace {

TEST(DrainCostPolicyTest, NeverDearBeforeAFullPassWasMeasured) {
  DrainCostPolicy policy;
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(policy.Dear(10.0));
}

TEST(DrainCostPolicyTest, DrainsUnderTheFloorAreNeverDearOnASmallDatabase) {
  DrainCostPolicy policy;
  policy.NoteFullPassCost(0.003);  // a few hundred seats
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(policy.Dear(0.2));
}

TEST(DrainCostPolicyTest, TwoDearDrainsInARowGiveUpTheSlot) {
  DrainCostPolicy policy;
  policy.NoteFullPassCost(0.5);
  EXPECT_FALSE(policy.Dear(1.0));
  EXPECT_TRUE(policy.Dear(1.0));
  // Counting starts again after giving up.
  EXPECT_FALSE(policy.Dear(1.0));
  EXPECT_TRUE(policy.Dear(1.0));
}

TEST(DrainCostPolicyTest, ACheapDrainBetweenBreaksTheRun) {
  DrainCostPolicy policy;
  policy.NoteFullPassCost(0.5);
  EXPECT_FALSE(policy.Dear(1.0));
  EXPECT_FALSE(policy.Dear(0.4));  // cheaper than a full pass
  EXPECT_FALSE(policy.Dear(1.0));
  policy.Reset();
  EXPECT_FALSE(policy.Dear(1.0));
  EXPECT_TRUE(policy.Dear(1.0));
}

TEST(DrainCostPolicyTest, ADrainCheaperThanTheFullPassIsNotDearAboveTheFloor) {
  DrainCostPolicy policy;
  policy.NoteFullPassCost(4.3);  // 5M seats
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(policy.Dear(3.3));
  EXPECT_FALSE(policy.Dear(4.4));
  EXPECT_TRUE(policy.Dear(4.4));
}

}  // namespace
}  // namespace seatwatch::changes
