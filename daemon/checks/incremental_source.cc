#include "checks/incremental_source.h"

#include <algorithm>

#include "checks/mismatch_report.h"
#include "db/array_literal.h"
#include "util/log.h"

namespace seatwatch::checks {

// The pending xids the snapshot cannot see yet. pgoutput gives 32-bit xids:
// each is widened to the xid8 nearest the snapshot's xmax (a signed 32-bit
// distance, so an xid just above xmax, committed after the snapshot, stays
// above it and is invisible).
const char* const IncrementalSource::kVisibilitySql =
    "SELECT x FROM unnest($1::bigint[]) AS x, "
    "LATERAL (SELECT pg_current_snapshot() AS s) s, "
    "LATERAL (SELECT pg_snapshot_xmax(s.s)::text::bigint AS m) m "
    "WHERE NOT pg_visible_in_snapshot("
    "(m.m + ((((x - (m.m & 4294967295)) + 2147483648) & 4294967295) - 2147483648))::text::xid8, "
    "s.s)";

// Creation xids (in progress when the slot was created) that this snapshot
// cannot count on: committed but invisible to it, or still in progress. A
// transaction whose commit record precedes the slot's consistent point is
// never decoded, and it can still be in progress for everyone (a COMMIT
// waiting for a synchronous standby: flushed, in the clog, not yet out of
// the proc array, where pg_xact_status says "in progress"), so only
// transactions that have ended are settled; one that commits later and
// after the consistent point is decoded anyway.
const char* const IncrementalSource::kReadinessSql =
    "SELECT count(*) AS unsettled FROM unnest($1::text[]::xid8[]) AS x "
    "WHERE pg_xact_status(x) = 'in progress' OR (pg_xact_status(x) = 'committed' "
    "AND NOT pg_visible_in_snapshot(x, pg_current_snapshot()))";

const char* const IncrementalSource::kWalPositionSql =
    "SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint AS lsn";

namespace {

double UnixSeconds(std::chrono::system_clock::time_point at) {
  return std::chrono::duration<double>(at.time_since_epoch()).count();
}

template <typename T>
std::vector<std::string> AsText(const std::vector<T>& values) {
  std::vector<std::string> out;
  out.reserve(values.size());
  for (auto value : values) out.push_back(std::to_string(value));
  return out;
}

// What a run's snapshot saw of the pending xids, for the query cache.
std::string SeenTag(const std::vector<std::uint32_t>& visible) {
  std::string tag = "incremental; visible xids:";
  for (auto xid : visible) tag += " " + std::to_string(xid);
  return tag;
}

std::set<std::string> TableNames(const std::map<std::string, std::string>& tables) {
  std::set<std::string> names;
  for (const auto& entry : tables) names.insert(entry.first);
  return names;
}

}  // namespace

IncrementalSource::IncrementalSource(const config::QueryConfig& entry,
                                     IncrementalSettings settings)
    : entry_(entry),
      settings_(settings),
      key_is_label_(std::find(entry.labels.begin(), entry.labels.end(), entry.key) !=
                    entry.labels.end()),
      rows_(std::make_unique<IncrementalRows>(entry.key, entry.expiry_column,
                                              TableNames(entry.tables),
                                              settings.full_pass_interval)) {
  if (!entry.invariants.empty() && key_is_label_) {
    ledger_ = std::make_unique<ProvenanceLedger>(TableNames(entry.tables));
  }
  if (entry.row_terms) {
    pending_rows_ = std::make_unique<PendingRows>(TableNames(entry.tables));
    row_ledger_ = std::make_unique<RowLedger>(*entry.row_terms);
  }
}

void IncrementalSource::AcceptChanges(const changes::ChangeBatch& batch,
                                      changes::ResyncReason generation_reason) {
  rows_->AcceptChanges(batch, generation_reason);
  if (ledger_ && batch.feed_up) ledger_->Record(batch.transactions);
  if (row_ledger_) {
    if (!pending_rows_->Accept(batch)) {
      row_ledger_->Clear();
      read_whole_.clear();
    }
    for (const auto& transaction : batch.transactions) {
      for (const auto& [table, identities] : transaction.identities) {
        row_ledger_->SetIdentityColumns(table, identities.columns);
      }
    }
  }
  ReportMismatches();
}

void IncrementalSource::Attribute(std::vector<metrics::InvariantResult>& invariants) {
  if (!ledger_) return;
  std::set<std::string> violated;
  for (auto& invariant : invariants) {
    for (auto& violation : invariant.violations) {
      if (violation.value == 0) continue;
      for (const auto& label : violation.labels) {
        if (label.name != entry_.key) continue;
        violated.insert(label.value);
        violation.cause = ledger_->Of(label.value);
        break;
      }
    }
  }
  ledger_->Settle(violated, rows_->pending_xids());
}

void IncrementalSource::ReportMismatches() {
  for (const auto& difference : rows_->TakeMismatches()) {
    std::map<std::string, MismatchValues> judged;
    try {
      judged = JudgeDifference(difference, entry_);
    } catch (const std::exception& e) {
      // The rows bound when they were read; should they not now, the
      // difference still is one.
      judged[""] = MismatchValues{"?", std::string("rows that do not bind: ") + e.what()};
    }
    for (const auto& [invariant, values] : judged) {
      rows_->CountMismatch(invariant);
      log::Warn("incremental state differed from a backstop full pass, and the change feed "
                "handed over nothing that explains it: a seatwatch defect or a scoped_sql "
                "that misses rows; the full pass has corrected it",
                {{"check", entry_.name},
                 {"invariant", invariant},
                 {"key", entry_.key + "=" + difference.key},
                 {"incremental", values.incremental},
                 {"full_pass", values.full}});
    }
  }
}

metrics::IncrementalStatus IncrementalSource::Status() const {
  metrics::IncrementalStatus status = rows_->Status();
  if (entry_.invariants.empty()) {
    status.mismatches.emplace("", 0);
  } else {
    for (const auto& name : entry_.invariants) status.mismatches.emplace(name, 0);
  }
  if (ledger_) {
    status.provenance = true;
    status.provenance_commits = ledger_->commits();
    status.provenance_evicted = ledger_->evicted();
  }
  if (row_ledger_) {
    status.row_ledger = true;
    status.followed_keys = row_ledger_->key_count();
    status.followed_rows = row_ledger_->row_count();
    status.rechecked_by_rows = rechecked_by_rows_;
    status.rechecked_whole = rechecked_whole_;
  }
  return status;
}

Millis IncrementalSource::Interval(Millis normal) const {
  return rows_->seeded() ? settings_.interval : normal;
}

bool IncrementalSource::TakeStateFrom(IncrementalSource& previous) {
  const auto& a = entry_;
  const auto& b = previous.entry_;
  if (a.sql != b.sql || a.scoped_sql != b.scoped_sql || a.params != b.params || a.key != b.key ||
      a.tables != b.tables || a.expiry_column != b.expiry_column || a.max_rows != b.max_rows) {
    return false;
  }
  rows_ = std::move(previous.rows_);
  if (ledger_ && previous.ledger_) std::swap(ledger_, previous.ledger_);
  // The pending rows go with the pending xids; the followed keys start
  // over (the row terms may differ).
  if (pending_rows_ && previous.pending_rows_) {
    std::swap(pending_rows_, previous.pending_rows_);
  } else {
    pending_rows_.reset();
    row_ledger_.reset();
  }
  previous.rows_ = std::make_unique<IncrementalRows>(b.key, b.expiry_column, TableNames(b.tables),
                                                     previous.settings_.full_pass_interval);
  rows_->set_full_pass_interval(settings_.full_pass_interval);
  return true;
}

void IncrementalSource::Mismatch(const std::string& key, const std::exception& e) const {
  throw EntryMismatch(entry_.KeyLocation(key).Describe(std::string(EntrySection(entry_)) + "." +
                                                       key) +
                      ": " + e.what());
}

std::vector<std::uint32_t> IncrementalSource::Visible(
    CheckContext& context, const std::vector<std::uint32_t>& pending) const {
  if (pending.empty()) return {};
  auto invisible_rows =
      context.queries.RunRepeated(context.tx, kVisibilitySql,
                                  {db::TextArrayLiteral(AsText(pending))}, std::string());
  std::set<std::uint32_t> invisible;
  for (const auto& row : invisible_rows->values) {
    if (row.empty() || !row[0]) continue;
    invisible.insert(static_cast<std::uint32_t>(std::stoull(*row[0])));
  }
  std::vector<std::uint32_t> visible;
  for (auto xid : pending) {
    if (invisible.count(xid) == 0) visible.push_back(xid);
  }
  return visible;
}

bool IncrementalSource::Ready(CheckContext& context,
                              const std::vector<std::uint64_t>& creation_xids) const {
  if (creation_xids.empty()) return true;
  auto rows = context.queries.Run(context.tx, kReadinessSql,
                                  {db::TextArrayLiteral(AsText(creation_xids))});
  return !rows->values.empty() && !rows->values[0].empty() && rows->values[0][0] &&
         *rows->values[0][0] == "0";
}

BoundRows IncrementalSource::FullPass(CheckContext& context, const RunPlan& plan,
                                      const std::vector<std::uint32_t>& visible,
                                      double now_unix) {
  bool ready = plan.seeds && Ready(context, plan.creation_xids);
  auto start = std::chrono::steady_clock::now();
  auto full = context.queries.Run(context.tx, RowLimitedSql(entry_), entry_.params,
                                  SeenTag(visible));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CheckRowLimit(*full, entry_);
  std::optional<std::uint64_t> backstop_lsn;
  if (plan.reason == FullPassReason::kBackstop) {
    auto position = context.queries.Run(context.tx, kWalPositionSql, {});
    if (!position->values.empty() && position->values[0][0]) {
      backstop_lsn = std::stoull(*position->values[0][0]);
    }
  }
  if (full->ColumnIndex(entry_.key) < 0) {
    Mismatch("key", IncrementalMismatch("the query returns no column " + entry_.key));
  }
  if (!entry_.expiry_column.empty() && full->ColumnIndex(entry_.expiry_column) < 0) {
    Mismatch("expiry_column",
             IncrementalMismatch("the query returns no column " + entry_.expiry_column));
  }
  // Bind before keeping anything: a query that does not fit changes nothing.
  BindEntryColumns(*full, entry_);
  std::uint64_t unaudited = rows_->unaudited_keys();
  rows_->ApplyFull(*full, backstop_lsn, now_unix);
  if (row_ledger_) {
    // Whatever made the pass (a new slot, an unmappable change, the
    // backstop), the rows followed start over from the rechecks.
    row_ledger_->Clear();
    read_whole_.clear();
    pending_rows_->Settle(visible);
  }
  if (rows_->unaudited_keys() > unaudited) {
    log::Warn("backstop full pass: more keys differed from the incremental state than are held "
              "for the feed to explain; the others are corrected but not audited",
              {{"check", entry_.name},
               {"held", std::to_string(BackstopAudit::kMaxSuspects)},
               {"not_audited", std::to_string(rows_->unaudited_keys() - unaudited)}});
  }
  rows_->FullPassDone(plan, visible, ready, now_unix, seconds);
  return Bound();
}

std::set<std::string> IncrementalSource::Followed(const std::set<std::string>& keys,
                                                  const std::vector<std::uint32_t>& visible,
                                                  double now_unix, RowLedger::RowSet& to_read) {
  std::set<std::string> followed;
  if (!row_ledger_ || row_ledger_->key_count() == 0) return followed;
  PendingRows::Dirty dirty = pending_rows_->Of(visible);
  std::size_t reads = 0;
  for (const auto& key : keys) {
    if (!row_ledger_->Has(key)) continue;
    bool unnamed = dirty.unknown.count(key) > 0;
    if (unnamed || rows_->carried().count(key)) {
      log::Debug("rows of a followed key not all known: read whole",
                 {{"check", entry_.name}, {"key", key},
                  {"why", unnamed ? "a transaction named not all its rows"
                                  : "an earlier recheck failed"}});
      row_ledger_->Forget(key);
      continue;
    }
    RowLedger::RowSet rows = row_ledger_->Expired(key, now_unix);
    auto changed = dirty.rows.find(key);
    bool named = true;
    if (changed != dirty.rows.end()) {
      for (const auto& [table, identities] : changed->second) {
        // Rows named under another identity than the ledger reads by (the
        // table's replica identity changed meanwhile): not readable.
        named = named && dirty.columns[table] == row_ledger_->IdentityColumns(table);
        rows[table].insert(identities.begin(), identities.end());
      }
    }
    if (!named) {
      row_ledger_->Forget(key);
      continue;
    }
    for (const auto& [table, identities] : rows) {
      reads += identities.size();
      to_read[table].insert(identities.begin(), identities.end());
    }
    followed.insert(key);
  }
  if (reads > RowLedger::kMaxRowsRead) {
    log::Debug("too many changed rows to follow: keys read whole",
               {{"check", entry_.name}, {"rows", std::to_string(reads)}});
    // A bulk change: reading its rows one by one is no cheaper.
    for (const auto& key : followed) row_ledger_->Forget(key);
    followed.clear();
    to_read.clear();
  }
  return followed;
}

void IncrementalSource::SeedHot(CheckContext& context, const std::set<std::string>& exact,
                                const std::string& tag, double now_unix) {
  if (!row_ledger_) return;
  for (auto it = read_whole_.begin(); it != read_whole_.end();) {
    it = now_unix - it->second.second > kHotSeconds ? read_whole_.erase(it) : std::next(it);
  }
  // One key a cycle, the one read whole most often: a reading of several
  // hot events at once would make one cycle dear, and the recheck budget
  // would hold the next one back for seconds.
  std::set<std::string> hot;
  int most = 0;
  for (const auto& key : exact) {
    auto [it, added] = read_whole_.emplace(key, std::make_pair(0, now_unix));
    int reads = ++it->second.first;
    if (reads >= kHotReads && reads > most && !row_ledger_->Has(key)) {
      hot = {key};
      most = reads;
    }
  }
  if (hot.empty() || !row_ledger_->CanSeed()) return;
  log::Debug("following a hot key row by row", {{"check", entry_.name}, {"key", *hot.begin()}});
  db::Rows seeded;
  for (const auto& seed : row_ledger_->SeedStatements(hot)) {
    auto rows = context.queries.Run(context.tx, seed.sql, seed.params, tag);
    seeded.values.insert(seeded.values.end(), rows->values.begin(), rows->values.end());
  }
  row_ledger_->ApplySeed(hot, seeded);
}

void IncrementalSource::Recheck(CheckContext& context, const std::set<std::string>& keys,
                                const std::vector<std::uint32_t>& visible, double now_unix) {
  RowLedger::RowSet to_read;
  std::set<std::string> followed = Followed(keys, visible, now_unix, to_read);
  std::set<std::string> exact;
  for (const auto& key : keys) {
    if (followed.count(key) == 0) exact.insert(key);
  }
  // What the snapshot saw, naming every result of this recheck in the cache.
  const std::string tag = SeenTag(visible);
  try {
    // The followed keys' rows, made by the ledger in the full pass's
    // columns; the others' as the scoped SQL returns them. Each set is
    // applied to its own keys, so the scoped SQL may order its columns its
    // own way either way.
    std::set<std::string> by_rows;
    db::Rows made;
    made.columns = rows_->columns();
    if (!followed.empty()) {
      RowLedger::Statement read = row_ledger_->ReadStatement(to_read);
      auto rows = context.queries.RunRepeated(context.tx, read.sql, read.params, tag);
      bool proven = row_ledger_->ApplyRead(to_read, *rows);
      for (const auto& key : followed) {
        auto kept = proven ? row_ledger_->RowsOf(key, made.columns.size()) : std::nullopt;
        if (!kept) {
          exact.insert(key);  // out of balance: read exactly
          continue;
        }
        by_rows.insert(key);
        for (auto& row : *kept) made.values.push_back(std::move(row));
      }
    }
    std::shared_ptr<const db::Rows> scoped;
    if (!exact.empty()) {
      std::vector<std::string> params;
      params.reserve(entry_.params.size() + 1);
      params.push_back(db::TextArrayLiteral(std::vector<std::string>(exact.begin(), exact.end())));
      params.insert(params.end(), entry_.params.begin(), entry_.params.end());
      scoped = context.queries.Run(context.tx, RowLimited(entry_.scoped_sql, entry_), params, tag);
      CheckRowLimit(*scoped, entry_);
      SeedHot(context, exact, tag, now_unix);
    }
    rechecked_whole_ += exact.size();
    rechecked_by_rows_ += by_rows.size();
    try {
      if (!by_rows.empty()) rows_->ApplyRecheck(by_rows, made);
      if (scoped) rows_->ApplyRecheck(exact, *scoped);
    } catch (const IncrementalMismatch& e) {
      Mismatch("scoped_sql", e);
    }
  } catch (...) {
    if (row_ledger_) {
      for (const auto& key : keys) row_ledger_->Forget(key);
      pending_rows_->Settle(visible);
    }
    rows_->RecheckFailed(keys, visible);
    throw;
  }
  rows_->RecheckDone(keys, visible);
  if (pending_rows_) pending_rows_->Settle(visible);
}

BoundRows IncrementalSource::Bound() const {
  BoundRows bound;
  CheckRowLimit(rows_->row_count(), entry_);
  if (key_is_label_ && rows_->keyless().empty()) {
    db::Rows columns;
    columns.columns = rows_->columns();
    bound.binding = BindEntryColumns(columns, entry_);
    bound.keyed = rows_.get();
    return bound;
  }
  bound.rows = rows_->rows();
  bound.binding = BindEntryColumns(*bound.rows, entry_);
  return bound;
}

BoundRows IncrementalSource::Fetch(CheckContext& context) {
  double now_unix = UnixSeconds(context.now);
  RunPlan plan = rows_->Plan(now_unix);
  std::vector<std::uint32_t> visible = Visible(context, plan.pending_xids);
  if (plan.full) return FullPass(context, plan, visible, now_unix);
  std::set<std::string> keys = rows_->DirtyKeys(visible, now_unix);
  if (keys.empty()) {
    rows_->RecheckDone(keys, visible);
    if (pending_rows_) pending_rows_->Settle(visible);
  } else {
    Recheck(context, keys, visible, now_unix);
  }
  return Bound();
}

}  // namespace seatwatch::checks
