#include "changes/coverage.h"

#include <utility>

namespace seatwatch::changes {

namespace {

void Append(std::string& out, const std::string& change) {
  out += (out.empty() ? "" : "; ") + change;
}

}  // namespace

bool Coverage::operator==(const Coverage& other) const {
  return publication_exists == other.publication_exists &&
         publication_row == other.publication_row && all_tables == other.all_tables &&
         inserts == other.inserts && updates == other.updates && deletes == other.deletes &&
         truncates == other.truncates && relations == other.relations;
}

std::string DescribeCoverageChange(const Coverage& verified, const Coverage& now,
                                   const std::string& publication) {
  std::string out;
  const std::string pub = "publication " + publication;
  if (verified.publication_exists && !now.publication_exists) {
    Append(out, pub + " no longer exists");
  } else if (!verified.publication_exists && now.publication_exists) {
    Append(out, pub + " was created");
  }
  const std::pair<bool Coverage::*, const char*> actions[] = {
      {&Coverage::inserts, "inserts"},
      {&Coverage::updates, "updates"},
      {&Coverage::deletes, "deletes"},
      {&Coverage::truncates, "truncates"}};
  bool actions_changed = false;
  if (verified.publication_exists && now.publication_exists) {
    for (const auto& [member, name] : actions) {
      if (verified.*member == now.*member) continue;
      actions_changed = true;
      Append(out, pub + (now.*member ? " now publishes " : " no longer publishes ") + name);
    }
    if (verified.all_tables != now.all_tables) {
      actions_changed = true;
      Append(out, pub + (now.all_tables ? " is now" : " is no longer") + " FOR ALL TABLES");
    }
    if (!actions_changed && verified.publication_row != now.publication_row) {
      Append(out, pub + " was altered (its actions may have changed and changed back)");
    }
  }
  std::map<std::uint32_t, const CoveredRelation*> after;
  for (const auto& relation : now.relations) after[relation.oid] = &relation;
  std::map<std::uint32_t, const CoveredRelation*> before;
  for (const auto& relation : verified.relations) before[relation.oid] = &relation;
  for (const auto& [oid, was] : before) {
    auto it = after.find(oid);
    if (it == after.end()) {
      Append(out, was->Qualified() + " (OID " + std::to_string(oid) + ") no longer exists");
      continue;
    }
    const CoveredRelation& is = *it->second;
    if (is.schema != was->schema || is.name != was->name) {
      Append(out, was->Qualified() + " was renamed to " + is.Qualified());
    }
    if (is.membership == was->membership) continue;
    if (is.membership.empty()) {
      Append(out, was->Qualified() + " was removed from " + pub);
    } else if (was->membership.empty()) {
      Append(out, was->Qualified() + " was added to " + pub);
    } else {
      Append(out, was->Qualified() + " was removed from " + pub +
                      " and added back, or its column list changed");
    }
  }
  for (const auto& [oid, is] : after) {
    if (before.count(oid) == 0) {
      Append(out, is->Qualified() + " is another relation (OID " + std::to_string(oid) +
                      ") than the one verified");
    }
  }
  if (out.empty() && verified != now) Append(out, "the coverage of " + pub + " changed");
  return out;
}

std::map<std::uint32_t, CoveredRelation> RelationsByOid(const Coverage& coverage) {
  std::map<std::uint32_t, CoveredRelation> out;
  for (const auto& relation : coverage.relations) out[relation.oid] = relation;
  return out;
}

}  // namespace seatwatch::changes
