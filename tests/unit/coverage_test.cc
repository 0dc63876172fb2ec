// What the change feed says changed of its publication's coverage of the
// watched tables, from two readings of the catalog. No database.
#include "changes/coverage.h"

#include <gtest/gtest.h>

namespace seatwatch::changes {
namespace {

Coverage Verified() {
  Coverage coverage;
  coverage.publication_exists = true;
  coverage.publication_row = "16400/750";
  coverage.inserts = coverage.updates = coverage.deletes = coverage.truncates = true;
  coverage.relations = {{16384, "public", "seats", "r16401/750"},
                        {16390, "public", "tickets", "r16402/750"}};
  return coverage;
}

std::string Change(const Coverage& now) {
  return DescribeCoverageChange(Verified(), now, "seatwatch");
}

TEST(CoverageTest, TheSameReadingIsNoChange) {
  EXPECT_EQ(Change(Verified()), "");
  EXPECT_TRUE(Verified() == Verified());
}

TEST(CoverageTest, ActionsNoLongerPublishedAreNamed) {
  Coverage now = Verified();
  now.publication_row = "16400/771";
  now.deletes = false;
  now.truncates = false;
  EXPECT_EQ(Change(now),
            "publication seatwatch no longer publishes deletes; publication seatwatch no longer "
            "publishes truncates");
}

// SET (publish = 'insert, update') and back between two drains: the flags
// are as verified, the row is another.
TEST(CoverageTest, APublicationAlteredAndAlteredBackIsAChange) {
  Coverage now = Verified();
  now.publication_row = "16400/772";
  EXPECT_EQ(Change(now),
            "publication seatwatch was altered (its actions may have changed and changed back)");
}

TEST(CoverageTest, ATableRemovedOrAddedBackIsNamed) {
  Coverage now = Verified();
  now.relations[1].membership = "";
  EXPECT_EQ(Change(now), "public.tickets was removed from publication seatwatch");
  now.relations[1].membership = "r16410/780";
  EXPECT_EQ(Change(now),
            "public.tickets was removed from publication seatwatch and added back, or its "
            "column list changed");
}

TEST(CoverageTest, RenamesGoneRelationsAndNewOnesAreNamed) {
  Coverage now = Verified();
  now.relations[1].name = "tickets_away";
  EXPECT_EQ(Change(now), "public.tickets was renamed to public.tickets_away");
  now = Verified();
  now.relations.pop_back();
  EXPECT_EQ(Change(now), "public.tickets (OID 16390) no longer exists");
  now.relations.push_back({16500, "public", "tickets", "r16501/790"});
  EXPECT_EQ(Change(now),
            "public.tickets (OID 16390) no longer exists; public.tickets is another relation "
            "(OID 16500) than the one verified");
}

TEST(CoverageTest, APublicationDroppedIsNamed) {
  Coverage now;
  now.relations = Verified().relations;
  for (auto& relation : now.relations) relation.membership = "";
  EXPECT_EQ(Change(now),
            "publication seatwatch no longer exists; public.seats was removed from publication "
            "seatwatch; public.tickets was removed from publication seatwatch");
}

TEST(CoverageTest, RelationsByOid) {
  auto relations = RelationsByOid(Verified());
  ASSERT_EQ(relations.size(), 2u);
  EXPECT_EQ(relations.at(16390).Qualified(), "public.tickets");
}

}  // namespace
}  // namespace seatwatch::changes
