#include "checks/row_ledger.h"

#include <algorithm>
#include <stdexcept>

#include "db/array_literal.h"
#include "declare/identifier.h"
#include "declare/sql_text.h"
#include "util/json_writer.h"

namespace seatwatch::checks {

namespace {

// The columns of a read: which table, the row's key, its identity (padded
// to the widest), its terms (padded).
constexpr std::size_t kTableColumn = 0;
constexpr std::size_t kKeyColumn = 1;
constexpr std::size_t kFirstId = 2;
constexpr int kProofTable = -1;

bool Flag(const db::Rows::Cell& cell) { return cell && *cell == "true"; }

// The value of `term` in a parsed row's list, or nullptr.
template <typename T>
const T* Find(const std::vector<std::pair<int, T>>& list, int term) {
  for (const auto& [at, value] : list) {
    if (at == term) return &value;
  }
  return nullptr;
}

// A count as float8 text, as the pass writes one (an integer below 2^53).
std::string CountText(std::int64_t count) { return std::to_string(count); }

}  // namespace

RowLedger::RowLedger(const declare::RowTerms& terms, std::size_t max_rows)
    : terms_(terms), max_rows_(max_rows) {
  for (const auto& table : terms_.tables) {
    names_.push_back(declare::TableText(table.table));
    term_width_ = std::max(term_width_, table.terms.size());
    std::vector<TermKind> kinds(table.terms.size(), TermKind::kFlag);
    for (const auto& side : table.sides) {
      if (side.hash >= 0) kinds[static_cast<std::size_t>(side.hash)] = TermKind::kHash;
    }
    for (const auto& expiry : table.expiries) {
      kinds[static_cast<std::size_t>(expiry.epoch)] = TermKind::kEpoch;
    }
    kinds_.push_back(std::move(kinds));
  }
  limits_.resize(terms_.tables.size());
  for (std::size_t v = 0; v < terms_.violations.size(); ++v) {
    const auto& limit = terms_.violations[v].limit;
    if (!limit) continue;
    limits_[limit->table].push_back(v);
    for (int g : limit->groups) kinds_[limit->table][static_cast<std::size_t>(g)] = TermKind::kText;
  }
  for (const auto& kinds : kinds_) {
    // Flags are bits of one word: a table of more terms is read whole.
    if (kinds.size() > 64) unusable_ = true;
    std::vector<int> flags;
    for (std::size_t i = 0; i < kinds.size(); ++i) {
      if (kinds[i] == TermKind::kFlag) flags.push_back(static_cast<int>(i));
    }
    flag_terms_.push_back(std::move(flags));
  }
  term_width_ = std::max(term_width_, terms_.proofs.size());
  columns_.resize(terms_.tables.size());
  owners_.resize(terms_.tables.size());
}

int RowLedger::TableIndex(const std::string& name) const {
  for (std::size_t t = 0; t < names_.size(); ++t) {
    if (names_[t] == name) return static_cast<int>(t);
  }
  return -1;
}

void RowLedger::SetIdentityColumns(const std::string& table,
                                   const std::vector<std::string>& columns) {
  for (std::size_t t = 0; t < names_.size(); ++t) {
    if (names_[t] != table || columns_[t] == columns) continue;
    if (!columns_[t].empty()) Clear();
    columns_[t] = columns;
  }
  id_width_ = 0;
  for (const auto& c : columns_) id_width_ = std::max(id_width_, c.size());
}

const std::vector<std::string>& RowLedger::IdentityColumns(const std::string& table) const {
  static const std::vector<std::string> kNone;
  int t = TableIndex(table);
  return t < 0 ? kNone : columns_[static_cast<std::size_t>(t)];
}

bool RowLedger::CanSeed() const {
  return !unusable_ && std::none_of(columns_.begin(), columns_.end(),
                      [](const auto& c) { return c.empty(); });
}

std::string RowLedger::Branch(std::size_t t, const std::string& from) const {
  const auto& table = terms_.tables[t];
  std::string select = "SELECT " + std::to_string(t) + " AS ledger_table, " +
                       declare::Col("t", table.key) + "::text AS ledger_key";
  for (std::size_t i = 0; i < id_width_; ++i) {
    select += ", " + (i < columns_[t].size() ? declare::Col("t", columns_[t][i]) + "::text"
                                             : std::string("NULL::text")) +
              " AS ledger_id_" + std::to_string(i + 1);
  }
  for (std::size_t i = 0; i < term_width_; ++i) {
    select += ",\n  " + (i < table.terms.size() ? "(" + table.terms[i] + ")::text"
                                                : std::string("NULL::text")) +
              " AS ledger_term_" + std::to_string(i + 1);
  }
  return select + from;
}

std::vector<RowLedger::Statement> RowLedger::SeedStatements(
    const std::set<std::string>& keys) const {
  std::vector<Statement> statements;
  std::string array = db::TextArrayLiteral(std::vector<std::string>(keys.begin(), keys.end()));
  for (std::size_t t = 0; t < terms_.tables.size(); ++t) {
    statements.push_back({Branch(t, "\nFROM " + declare::From(terms_.tables[t].table, "t") +
                                        "\nWHERE " + declare::Col("t", terms_.tables[t].key) +
                                        " = ANY ($1)"),
                          {array}});
  }
  return statements;
}

RowLedger::Statement RowLedger::ReadStatement(const RowSet& rows) const {
  Statement statement;
  // Every table, those with no row to read too (an empty list): one text
  // whatever changed, which a session plans once (QueryCache::RunRepeated).
  static const std::set<Identity> kNone;
  for (std::size_t u = 0; u < names_.size(); ++u) {
    int t = static_cast<int>(u);
    const auto& columns = columns_[u];
    if (columns.empty()) continue;
    auto asked = rows.find(names_[u]);
    const auto& identities = asked == rows.end() ? kNone : asked->second;
    // The identities as rows of the table's own type: each value is taken
    // by its column's input function, so the join compares like types and
    // keeps to the identity's index.
    util::JsonWriter json;
    json.BeginArray();
    for (const auto& identity : identities) {
      json.BeginObject();
      for (std::size_t i = 0; i < columns.size() && i < identity.size(); ++i) {
        json.Key(columns[i]).String(identity[i]);
      }
      json.EndObject();
    }
    json.EndArray();
    statement.params.push_back(json.str());
    const auto& table = terms_.tables[static_cast<std::size_t>(t)].table;
    // A subquery of its own: the terms name the table's columns unqualified.
    statement.sql += Branch(static_cast<std::size_t>(t),
                            "\nFROM " + declare::From(table, "t") + "\nWHERE (" +
                                declare::Cols("t", columns) + ") IN (SELECT " +
                                declare::Cols("i", columns) +
                                " FROM jsonb_populate_recordset(NULL::" +
                                declare::QuoteTable(table) + ", $" +
                                std::to_string(statement.params.size()) + "::jsonb) AS i)") +
                     "\nUNION ALL\n";
  }
  // The proofs, every read: an index dropped meanwhile is seen at once.
  statement.sql += "SELECT " + std::to_string(kProofTable) + ", NULL::text";
  for (std::size_t i = 0; i < id_width_; ++i) statement.sql += ", NULL::text";
  for (std::size_t i = 0; i < term_width_; ++i) {
    statement.sql += ", " + (i < terms_.proofs.size() ? "((\n" + terms_.proofs[i] + "\n))::text"
                                                      : std::string("NULL::text"));
  }
  return statement;
}

RowLedger::RowSet RowLedger::Expired(const std::string& key, double now_unix) const {
  RowSet out;
  auto it = keys_.find(key);
  if (it == keys_.end()) return out;
  for (std::size_t t = 0; t < terms_.tables.size(); ++t) {
    for (const auto& [term, ahead] : it->second.sums[t].ahead) {
      for (const auto& [at, identity] : ahead) {
        if (at > now_unix) break;
        out[names_[t]].insert(identity);
      }
    }
  }
  return out;
}

RowLedger::Parsed RowLedger::Parse(const Row& row, std::size_t t) const {
  Parsed parsed;
  const auto& kinds = kinds_[t];
  const std::size_t first = kFirstId + id_width_;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const auto& cell = row[first + i];
    int term = static_cast<int>(i);
    switch (kinds[i]) {
      case TermKind::kFlag:
        if (Flag(cell)) parsed.flags |= std::uint64_t{1} << i;
        break;
      case TermKind::kHash:
        if (cell) parsed.hashes.emplace_back(term, std::stoll(*cell));
        break;
      case TermKind::kEpoch:
        if (cell) parsed.epochs.emplace_back(term, std::make_pair(std::stod(*cell), *cell));
        break;
      case TermKind::kText:
        parsed.texts.emplace_back(term, cell.value_or(""));
        break;
    }
  }
  return parsed;
}

void RowLedger::Count(Sums& sums, std::size_t t, const Parsed& row, int sign) const {
  const auto& table = terms_.tables[t];
  auto set = [&](int term) { return term >= 0 && (row.flags >> term) & 1; };
  for (int term : flag_terms_[t]) {
    if (set(term)) sums.flags[term] += sign;
  }
  for (const auto& side : table.sides) {
    if (side.hash < 0 || !set(side.rows)) continue;
    if (const auto* hash = Find(row.hashes, side.hash)) {
      sums.hashes[side.hash] += sign * static_cast<HashSum>(*hash);
    }
  }
}

void RowLedger::Erase(KeyRows& key, std::size_t t, const Identity& identity) {
  auto it = key.tables[t].find(identity);
  if (it == key.tables[t].end()) return;
  Count(key.sums[t], t, it->second, -1);
  for (const auto& expiry : terms_.tables[t].expiries) {
    if (const auto* epoch = Find(it->second.epochs, expiry.epoch)) {
      key.sums[t].ahead[expiry.epoch].erase({epoch->first, identity});
    }
  }
  for (std::size_t v : limits_[t]) {
    const auto& limit = *terms_.violations[v].limit;
    if (!((it->second.flags >> limit.flag) & 1)) continue;
    std::vector<std::string> group;
    for (int g : limit.groups) group.push_back(*Find(it->second.texts, g));
    auto& groups = key.sums[t].groups[v];
    if (--groups[group] == 0) groups.erase(group);
  }
  key.tables[t].erase(it);
  owners_[t].erase(identity);
  --row_count_;
}

void RowLedger::Store(const Row& row, std::size_t t, const std::string& key) {
  auto it = keys_.find(key);
  if (it == keys_.end()) return;  // a row moved into a key not kept: it is rechecked whole
  Identity identity;
  for (std::size_t i = 0; i < columns_[t].size(); ++i) {
    const auto& cell = row.at(kFirstId + i);
    if (!cell) throw std::runtime_error("a row read has a NULL identity column");
    identity.push_back(*cell);
  }
  KeyRows& kept = it->second;
  // A row is in one key at a time: read under this key now, it has left
  // whichever key held it before (that key is dirty too: the move named
  // the row under both).
  auto owner = owners_[t].find(identity);
  if (owner != owners_[t].end()) Erase(owner->second->second, t, identity);
  Parsed parsed = Parse(row, t);
  Count(kept.sums[t], t, parsed, 1);
  for (const auto& expiry : terms_.tables[t].expiries) {
    const auto* epoch = Find(parsed.epochs, expiry.epoch);
    if (epoch && ((parsed.flags >> expiry.future) & 1)) {
      kept.sums[t].ahead[expiry.epoch].insert({epoch->first, identity});
    }
  }
  for (std::size_t v : limits_[t]) {
    const auto& limit = *terms_.violations[v].limit;
    if (!((parsed.flags >> limit.flag) & 1)) continue;
    std::vector<std::string> group;
    for (int g : limit.groups) group.push_back(*Find(parsed.texts, g));
    ++kept.sums[t].groups[v][group];
  }
  owners_[t].emplace(identity, it);
  kept.tables[t].emplace(std::move(identity), std::move(parsed));
  ++row_count_;
}

void RowLedger::Touch(const std::string& key) {
  auto it = keys_.find(key);
  if (it == keys_.end()) {
    recency_.push_front(key);
    KeyRows rows;
    rows.tables.resize(terms_.tables.size());
    rows.sums.resize(terms_.tables.size());
    rows.recency = recency_.begin();
    keys_.emplace(key, std::move(rows));
    return;
  }
  recency_.splice(recency_.begin(), recency_, it->second.recency);
}

int RowLedger::TableOf(const Row& row) const {
  if (row.size() != kFirstId + id_width_ + term_width_ || !row[kTableColumn]) {
    throw std::runtime_error("a read's row does not fit its statement");
  }
  int t = std::stoi(*row[kTableColumn]);
  if (t == kProofTable) return t;
  if (t < 0 || static_cast<std::size_t>(t) >= terms_.tables.size() || !row[kKeyColumn]) {
    throw std::runtime_error("a read's row names no table or no key");
  }
  return t;
}

void RowLedger::ApplySeed(const std::set<std::string>& keys, const db::Rows& rows) {
  for (const auto& key : keys) {
    Forget(key);
    Touch(key);
  }
  try {
    for (const auto& row : rows.values) {
      int t = TableOf(row);
      if (t == kProofTable) throw std::runtime_error("a seeding read's row names no table");
      if (keys.count(*row[kKeyColumn]) == 0) continue;
      Store(row, static_cast<std::size_t>(t), *row[kKeyColumn]);
    }
  } catch (...) {
    for (const auto& key : keys) Forget(key);
    throw;
  }
  Evict();
}

bool RowLedger::ApplyRead(const RowSet& asked, const db::Rows& rows) {
  // What was asked is gone unless the read brings it back.
  for (const auto& [name, identities] : asked) {
    int t = TableIndex(name);
    if (t < 0) continue;
    auto& owners = owners_[static_cast<std::size_t>(t)];
    for (const auto& identity : identities) {
      auto owner = owners.find(identity);
      if (owner != owners.end()) Erase(owner->second->second, static_cast<std::size_t>(t), identity);
    }
  }
  proofs_hold_ = terms_.proofs.empty();
  for (const auto& row : rows.values) {
    int t = TableOf(row);
    if (t == kProofTable) {
      proofs_hold_ = true;
      for (std::size_t i = 0; i < terms_.proofs.size(); ++i) {
        proofs_hold_ = proofs_hold_ && Flag(row[kFirstId + id_width_ + i]);
      }
      continue;
    }
    Store(row, static_cast<std::size_t>(t), *row[kKeyColumn]);
  }
  Evict();
  return proofs_hold_;
}

std::optional<std::vector<RowLedger::Row>> RowLedger::RowsOf(const std::string& key,
                                                            std::size_t width) const {
  auto it = keys_.find(key);
  if (it == keys_.end() || !proofs_hold_) return std::nullopt;
  const std::size_t tail = terms_.tail_labels.size();
  if (width != 4 + tail + terms_.metrics.size()) return std::nullopt;
  const KeyRows& kept = it->second;
  auto flag = [&](std::size_t t, int term) -> std::int64_t {
    auto at = kept.sums[t].flags.find(term);
    return at == kept.sums[t].flags.end() ? 0 : at->second;
  };
  auto hash = [&](std::size_t t, int term) -> HashSum {
    auto at = kept.sums[t].hashes.find(term);
    return at == kept.sums[t].hashes.end() ? 0 : at->second;
  };
  auto blank = [&] {
    Row row(width);
    row[0] = key;
    return row;
  };
  std::vector<Row> out;
  for (std::size_t v = 0; v < terms_.violations.size(); ++v) {
    const auto& violations = terms_.violations[v];
    if (violations.gate) {
      // The gate's test (BalanceGate::UnbalancedSql): a key whose rows
      // side has rows balances when the other side holds as many, none
      // with a NULL compared column, with the same sum of hashes.
      const auto& g = *violations.gate;
      const auto& a = terms_.tables[g.rows_table].sides[g.rows_side];
      const auto& b = terms_.tables[g.in_table].sides[g.in_side];
      std::int64_t rows = flag(g.rows_table, a.rows);
      if (rows == 0) continue;
      bool balanced = flag(g.in_table, b.rows) == rows;
      if (a.hashed >= 0) {
        balanced = balanced && flag(g.rows_table, a.hashed) == rows &&
                   flag(g.in_table, b.hashed) == rows &&
                   hash(g.rows_table, a.hash) == hash(g.in_table, b.hash);
      }
      if (!balanced) return std::nullopt;  // read exactly
      continue;
    }
    const auto& limit = *violations.limit;
    std::int64_t over = 0;
    auto groups = kept.sums[limit.table].groups.find(v);
    if (groups != kept.sums[limit.table].groups.end()) {
      for (const auto& [group, count] : groups->second) {
        over += static_cast<double>(count) > limit.limit;
      }
    }
    if (over == 0) continue;
    Row row = blank();
    row[1] = limit.invariant;
    row[2] = CountText(over);
    out.push_back(std::move(row));
  }
  auto expiry_row = [&](const declare::RowTerms::ExpiryAt& at) {
    int epoch = terms_.tables[at.table].expiries[at.expiry].epoch;
    auto ahead = kept.sums[at.table].ahead.find(epoch);
    if (ahead == kept.sums[at.table].ahead.end() || ahead->second.empty()) return;
    const auto& [moment, identity] = *ahead->second.begin();
    Row row = blank();
    row[3] = Find(kept.tables[at.table].at(identity).epochs, epoch)->second;
    out.push_back(std::move(row));
  };
  for (const auto& at : terms_.expiries) expiry_row(at);
  for (std::size_t m = 0; m < terms_.metrics.size(); ++m) {
    const auto& metric = terms_.metrics[m];
    bool present = false;
    for (std::size_t t : metric.tables) present = present || !kept.tables[t].empty();
    if (present) {
      std::size_t label = static_cast<std::size_t>(
          std::find(terms_.tail_labels.begin(), terms_.tail_labels.end(), metric.label) -
          terms_.tail_labels.begin());
      for (const auto& tally : metric.tallies) {
        Row row = blank();
        row[4 + label] = tally.name;
        row[4 + tail + m] = CountText(flag(tally.table, tally.flag));
        out.push_back(std::move(row));
      }
    }
    for (const auto& at : metric.expiries) expiry_row(at);
  }
  return out;
}

void RowLedger::Forget(const std::string& key) {
  auto it = keys_.find(key);
  if (it == keys_.end()) return;
  for (std::size_t t = 0; t < it->second.tables.size(); ++t) {
    row_count_ -= it->second.tables[t].size();
    for (const auto& [identity, parsed] : it->second.tables[t]) owners_[t].erase(identity);
  }
  recency_.erase(it->second.recency);
  keys_.erase(it);
}

void RowLedger::Clear() {
  keys_.clear();
  for (auto& owners : owners_) owners.clear();
  recency_.clear();
  row_count_ = 0;
}

void RowLedger::Evict() {
  while (row_count_ > max_rows_ && !recency_.empty()) Forget(recency_.back());
}

}  // namespace seatwatch::checks
