#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "changes/change_batch.h"
#include "changes/coverage.h"
#include "changes/pgoutput_messages.h"
#include "changes/watched_relation.h"

namespace seatwatch::changes {

namespace detail {
// The transaction between Begin and Commit. (Outside ChangeDecoder: clang
// cannot use a nested class's default member initializers in a member
// std::optional of the class being defined.)
struct OpenTransaction {
  TransactionChanges changes;
  bool touched_watched = false;
};
}  // namespace detail

// Turns the pgoutput messages of a slot, fed in order, into the keys each
// committed transaction changed in the watched tables.
//
// `tables`: watched table -> its key column (a plain name matches a relation
// of that name in any schema, "schema.table" exactly that one). A change of a
// watched table yields the key of its new row (Insert, Update) and of its old
// row (Update with an old tuple, Delete). When the replica identity cannot
// say which key a change had (an Update that may have moved the row but
// carries no old key, a Delete whose old tuple lacks the key column, a
// TRUNCATE, a NULL or unchanged-TOAST key with no old value), the first such
// reason is kept in unmappable(): the keys are not enough, a full pass is.
//
// Every committed transaction that touched a watched table is returned by
// TakeCommitted, also one whose change was unmappable (its xid tells a full
// pass whether it can see it); transactions of unwatched tables only are
// counted in decoded_changes() and dropped.
//
// Feed throws PgoutputError for a message that cannot be parsed and for a
// stream that breaks the protocol (a change of a relation no Relation
// message announced, a tuple of another width than its relation, a change
// or Commit outside Begin/Commit, a Begin inside one). The decoder is then
// in an unknown state: the caller starts over with a new slot and Reset().
// With `verified`, the relations the feed verified for the watched tables
// (by OID, as read before its slot was made), every Relation message is
// checked against them: pgoutput names a relation by OID, and a watched
// relation under another name (renamed away: its changes would be taken for
// an unwatched table's) or a watched name under an OID not verified (a table
// made anew) means the coverage changed; the first such change is kept in
// coverage_change(). A relation neither verified nor named like a watched
// table is just not watched.
//
// Not thread-safe: one drain at a time.
class ChangeDecoder {
 public:
  explicit ChangeDecoder(std::map<std::string, std::string> tables);
  ChangeDecoder(std::map<std::string, std::string> tables,
                std::map<std::uint32_t, CoveredRelation> verified);

  // table -> the words its entries' SQL uses (SqlWords): which columns'
  // values the row changes of each transaction keep, for provenance. None
  // kept without it. Takes effect at the next Relation message of a table
  // (pgoutput sends them again in every decoding call).
  void SetMonitoredWords(std::map<std::string, std::set<std::string>> words) {
    words_ = std::move(words);
  }

  void Feed(std::string_view message);

  std::vector<TransactionChanges> TakeCommitted();
  const std::string& unmappable() const { return unmappable_; }
  void ClearUnmappable() { unmappable_.clear(); }
  // What a Relation message showed of a change of coverage, or empty.
  const std::string& coverage_change() const { return coverage_change_; }
  // Insert, Update, Delete and Truncate messages seen, of every table.
  std::uint64_t decoded_changes() const { return decoded_changes_; }
  // Forgets the relations, any transaction in progress and the committed
  // ones not taken yet, for a new slot (whose full pass covers them; pgoutput
  // announces every relation again in each decoding call anyway). Keeps
  // decoded_changes() and unmappable().
  void Reset();

 private:
  using Open = detail::OpenTransaction;
  class Visitor;

  const WatchedRelation& Lookup(std::uint32_t oid, const char* message) const;
  Open& InTransaction(const char* message);
  void Unmappable(const std::string& reason);
  void CheckCoverage(const RelationMessage& message, const WatchedRelation& relation);

  std::map<std::string, std::string> tables_;
  std::map<std::string, std::set<std::string>> words_;
  std::map<std::uint32_t, WatchedRelation> relations_;
  std::optional<Open> open_;
  std::vector<TransactionChanges> committed_;
  std::string unmappable_;
  std::optional<std::map<std::uint32_t, CoveredRelation>> verified_;
  std::string coverage_change_;
  std::uint64_t decoded_changes_ = 0;
};

}  // namespace seatwatch::changes
