#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "changes/change_batch.h"
#include "db/rows.h"
#include "declare/row_terms.h"

namespace seatwatch::checks {

// The rows of a declared check's hot keys, kept one by one with what each
// adds to the check's result (declare::RowTerms), so that a recheck of such
// a key reads only the rows that changed, by their replica identity,
// instead of the key whole. An on-sale event of thousands of seats taking a
// hundred writes a second is read once, then followed: each cycle costs what
// changed in it.
//
// Why it holds: every committed change of a watched table comes through
// the feed with the replica identity of the row it touched (old and new),
// so a key's rows differ from the database's, in the recheck's snapshot,
// only in rows the cycle reads again. From the rows the key's aggregates are
// the sums the gate's scans would count, and a key whose sides balance has
// no violation of a gated entry; a key out of balance (or whose unique
// index proof fails) is read exactly by the check's scoped SQL, as before.
// A time-bound row (a hold) is read again when its expiry passes.
// Anything the ledger cannot vouch for forgets the key: a recheck that
// failed, a transaction whose rows are not all named, a new slot, a full
// pass. Bounded by `max_rows`, the least recently read keys forgotten first.
//
// Single-threaded (the poller's thread).
class RowLedger {
 public:
  using Identity = changes::TransactionChanges::Identity;
  using Row = std::vector<db::Rows::Cell>;
  // Table name as the feed names it -> identities.
  using RowSet = std::map<std::string, std::set<Identity>>;
  static constexpr std::size_t kDefaultMaxRows = 100000;

  RowLedger(const declare::RowTerms& terms, std::size_t max_rows = kDefaultMaxRows);

  // The identity columns of each table, as the feed's Relation messages
  // name them; another set for a table than before forgets every key.
  void SetIdentityColumns(const std::string& table, const std::vector<std::string>& columns);
  // Every table's identity columns are known: keys can be read whole.
  bool CanSeed() const;
  // The identity columns the ledger reads `table`'s rows by (empty: none).
  const std::vector<std::string>& IdentityColumns(const std::string& table) const;
  bool Has(const std::string& key) const { return keys_.count(key) > 0; }
  std::size_t key_count() const { return keys_.size(); }
  std::size_t row_count() const { return row_count_; }

  struct Statement {
    std::string sql;
    std::vector<std::string> params;
  };
  // Every row of `keys` ($1, a text[] literal), one statement a table: a
  // UNION of them is planned as a Parallel Append, whose workers cost more
  // to start than the key's rows take to read.
  std::vector<Statement> SeedStatements(const std::set<std::string>& keys) const;
  // The rows `rows` names, then one row with the proofs: a branch for every
  // table, in the terms' order, its identities as a JSON array (`[]` for a
  // table with none asked), so that the text is the same every cycle.
  Statement ReadStatement(const RowSet& rows) const;
  // Rows the statements would pass to the database beyond this many make
  // the keys read whole instead.
  static constexpr std::size_t kMaxRowsRead = 5000;

  // The rows of `key` whose expiry has passed `now_unix` since they were
  // read (a hold lapsed: the row counts differently now).
  RowSet Expired(const std::string& key, double now_unix) const;

  // Replaces `keys` with the rows SeedStatements read (throws
  // std::runtime_error on a result that does not fit: the keys are then
  // forgotten).
  void ApplySeed(const std::set<std::string>& keys, const db::Rows& rows);
  // Every identity asked for is replaced by its row read, or removed when
  // none came back; returns false when the proofs did not hold (the keys
  // must then be read exactly).
  bool ApplyRead(const RowSet& asked, const db::Rows& rows);

  // `key`'s rows as the check's pass makes them (its result columns in
  // `width`), or nullopt when the key must be read exactly: a side out of
  // balance, or a proof that does not hold.
  std::optional<std::vector<Row>> RowsOf(const std::string& key, std::size_t width) const;

  void Forget(const std::string& key);
  void Clear();

 private:
  // One row's terms, parsed: the flags as bits (by term index), the
  // hashes, expiry moments and group columns by term index.
  struct Parsed {
    std::uint64_t flags = 0;
    std::vector<std::pair<int, std::int64_t>> hashes;  // non-NULL hashes
    std::vector<std::pair<int, std::pair<double, std::string>>> epochs;  // non-NULL moments, as read
    std::vector<std::pair<int, std::string>> texts;  // group columns
  };
  // What one table's rows of a key add up to, kept as rows come and go:
  // each flag's count, each side's hash sum, the moments still ahead, each
  // at_most group's count.
  __extension__ typedef __int128 HashSum;  // exact, as PostgreSQL's numeric sum
  struct Sums {
    std::map<int, std::int64_t> flags;  // flag term -> rows with it set
    std::map<int, HashSum> hashes;      // a side's hash term -> sum over the side's rows
    // Epoch term -> the rows whose moment is still ahead, by moment.
    std::map<int, std::set<std::pair<double, Identity>>> ahead;
    // at_most entry -> group -> rows.
    std::map<std::size_t, std::map<std::vector<std::string>, std::int64_t>> groups;
  };
  struct KeyRows {
    std::vector<std::map<Identity, Parsed>> tables;  // by RowTerms table
    std::vector<Sums> sums;                          // by RowTerms table
    std::list<std::string>::iterator recency;
  };
  enum class TermKind : char { kFlag, kHash, kEpoch, kText };

  int TableIndex(const std::string& name) const;
  // A read row's table (kProofTable for the proofs' row), once its shape
  // is checked: throws std::runtime_error on a row that does not fit.
  int TableOf(const Row& row) const;
  // One table's SELECT of its rows' terms, then `from` (its FROM and WHERE).
  std::string Branch(std::size_t table, const std::string& from) const;
  void Store(const Row& row, std::size_t table, const std::string& key);
  Parsed Parse(const Row& row, std::size_t table) const;
  // Adds (sign 1) or takes away (-1) a row's part of its table's sums.
  void Count(Sums& sums, std::size_t table, const Parsed& row, int sign) const;
  void Erase(KeyRows& key, std::size_t table, const Identity& identity);
  void Touch(const std::string& key);
  void Evict();

  declare::RowTerms terms_;
  std::vector<std::vector<TermKind>> kinds_;  // per table, per term
  std::vector<std::vector<int>> flag_terms_;  // per table: its kFlag terms
  // Per table: its at_most entries (index into terms_.violations).
  std::vector<std::vector<std::size_t>> limits_;
  std::vector<std::string> names_;                 // feed name per RowTerms table
  std::vector<std::vector<std::string>> columns_;  // identity columns per table
  std::size_t id_width_ = 0;
  std::size_t term_width_ = 0;
  std::size_t max_rows_;
  std::map<std::string, KeyRows> keys_;
  // Per table: which key holds each row, so that a read finds the rows it
  // replaces without looking in every key.
  std::vector<std::map<Identity, std::map<std::string, KeyRows>::iterator>> owners_;
  std::list<std::string> recency_;  // most recent first
  std::size_t row_count_ = 0;
  bool proofs_hold_ = true;
  bool unusable_ = false;  // a table of more than 64 terms
};

}  // namespace seatwatch::checks
