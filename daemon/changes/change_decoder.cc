#include "changes/change_decoder.h"

#include <utility>

#include "changes/pgoutput_error.h"
#include "changes/pgoutput_parser.h"

namespace seatwatch::changes {

namespace {

// Why a tuple's value cannot serve as a key, or empty when it can.
std::string Unusable(const TupleValue& value) {
  switch (value.kind) {
    case TupleValue::Kind::kText: return "";
    case TupleValue::Kind::kNull: return "is NULL";
    case TupleValue::Kind::kUnchangedToast: return "is unchanged TOAST with no old value";
    case TupleValue::Kind::kBinary: return "is in binary form";
  }
  return "?";
}

metrics::ValueText ValueOf(const TupleValue& value) {
  using Kind = metrics::ValueText::Kind;
  switch (value.kind) {
    case TupleValue::Kind::kText: return metrics::ValueText::Of(Kind::kText, value.data);
    case TupleValue::Kind::kNull: return metrics::ValueText::Of(Kind::kNull);
    case TupleValue::Kind::kUnchangedToast: return metrics::ValueText::Of(Kind::kUnchanged);
    case TupleValue::Kind::kBinary: return metrics::ValueText::Of(Kind::kBinary);
  }
  return {};
}

// What an old tuple says of a column: a 'K' tuple carries only the replica
// identity's columns (the others are NULL placeholders).
metrics::ValueText OldValueOf(OldTuple kind, const Tuple& old_tuple, std::size_t column,
                              bool in_identity) {
  if (kind == OldTuple::kNone || (kind == OldTuple::kKey && !in_identity)) return {};
  return ValueOf(old_tuple[column]);
}

bool SameValue(const metrics::ValueText& a, const metrics::ValueText& b) {
  return a.kind == b.kind && a.text == b.text && a.cut == b.cut;
}

// Records which row of `relation` the change touched under `key_value`: its
// identity columns' values in `tuple`, an unchanged out-of-line one taken
// from `old_tuple` (when given). Anything short of every value as text
// leaves the transaction's identities incomplete.
void Identify(TransactionChanges& changes, const WatchedRelation& relation,
              const std::string& table, std::string_view key_value, const Tuple& tuple,
              const Tuple* old_tuple) {
  if (!changes.identities_complete) return;
  if (!relation.identified() || changes.identity_count >= TransactionChanges::kMaxIdentities) {
    changes.identities_complete = false;
    changes.identities.clear();
    return;
  }
  TransactionChanges::Identity identity;
  for (std::size_t column : relation.identity) {
    const TupleValue* value = &tuple[column];
    if (value->kind == TupleValue::Kind::kUnchangedToast && old_tuple) value = &(*old_tuple)[column];
    if (value->kind != TupleValue::Kind::kText) {
      changes.identities_complete = false;
      changes.identities.clear();
      return;
    }
    identity.emplace_back(value->data);
  }
  TransactionChanges::TableIdentities& known = changes.identities[table];
  if (known.by_key.empty()) known.columns = relation.identity_names;
  if (known.columns != relation.identity_names) {  // the identity changed midway
    changes.identities_complete = false;
    changes.identities.clear();
    return;
  }
  if (known.by_key[std::string(key_value)].insert(std::move(identity)).second) {
    ++changes.identity_count;
  }
}

}  // namespace

// Applies one parsed message to the decoder's state.
class ChangeDecoder::Visitor {
 public:
  explicit Visitor(ChangeDecoder& decoder) : d_(decoder) {}

  void operator()(const BeginMessage& m) {
    if (d_.open_) {
      throw PgoutputError("pgoutput Begin of xid " + std::to_string(m.xid) +
                          " inside the transaction of xid " +
                          std::to_string(d_.open_->changes.xid));
    }
    d_.open_.emplace();
    d_.open_->changes.xid = m.xid;
    d_.open_->changes.commit_lsn = m.final_lsn;
    // pgoutput's timestamps count microseconds from 2000-01-01 UTC.
    d_.open_->changes.commit_unix = static_cast<double>(m.commit_time) / 1e6 + 946684800.0;
  }

  void operator()(const CommitMessage&) {
    Open& open = d_.InTransaction("Commit");
    if (open.touched_watched) d_.committed_.push_back(std::move(open.changes));
    d_.open_.reset();
  }

  void operator()(const RelationMessage& m) {
    const WatchedRelation& relation = d_.relations_[m.oid] = ResolveRelation(m, d_.tables_, d_.words_);
    if (d_.verified_) d_.CheckCoverage(m, relation);
  }

  void operator()(const InsertMessage& m) {
    Open& open = d_.InTransaction("Insert");
    const WatchedRelation& relation = Checked(m.relation_oid, "Insert", m.new_tuple);
    ForEachPublishedKey(open, relation, "insert", [&](const WatchedKey& key) {
      if (!Add(open, relation, key, m.new_tuple[key.column], "insert")) return;
      Keep(open, key, "INSERT", m.new_tuple[key.column].data, OldTuple::kNone, {}, &m.new_tuple);
      Identify(open.changes, relation, key.table, m.new_tuple[key.column].data, m.new_tuple,
               nullptr);
    });
  }

  void operator()(const UpdateMessage& m) {
    Open& open = d_.InTransaction("Update");
    const WatchedRelation& relation = Checked(m.relation_oid, "Update", m.new_tuple);
    if (m.old_kind != OldTuple::kNone) CheckWidth(relation, "Update", m.old_tuple);
    ForEachPublishedKey(open, relation, "update", [&](const WatchedKey& key) {
      const TupleValue& new_value = m.new_tuple[key.column];
      if (m.old_kind == OldTuple::kNone) {
        // No old tuple: the replica identity columns did not change, so the
        // key did iff it is one of them.
        if (!key.in_identity) NotCarried(relation, key, "update");
        if (Add(open, relation, key, new_value, "update")) {
          Keep(open, key, "UPDATE", new_value.data, m.old_kind, m.old_tuple, &m.new_tuple);
          Identify(open.changes, relation, key.table, new_value.data, m.new_tuple, nullptr);
        }
        return;
      }
      const TupleValue& old_value = m.old_tuple[key.column];
      if (!AddOld(open, relation, key, m.old_kind, old_value, "update")) return;
      Keep(open, key, "UPDATE", old_value.data, m.old_kind, m.old_tuple, &m.new_tuple);
      // An old tuple: the identity changed (or it is FULL). The row left
      // its old identity and, under its new key, has a new one.
      Identify(open.changes, relation, key.table, old_value.data, m.old_tuple, nullptr);
      // An out-of-line key the update did not touch is the old one, added.
      bool same_key = new_value.kind == TupleValue::Kind::kUnchangedToast ||
                      (new_value.kind == TupleValue::Kind::kText && new_value.data == old_value.data);
      if (same_key) {
        Identify(open.changes, relation, key.table, old_value.data, m.new_tuple, &m.old_tuple);
        return;
      }
      if (Add(open, relation, key, new_value, "update")) {
        Keep(open, key, "UPDATE", new_value.data, m.old_kind, m.old_tuple, &m.new_tuple);
        Identify(open.changes, relation, key.table, new_value.data, m.new_tuple, &m.old_tuple);
      }
    });
  }

  void operator()(const DeleteMessage& m) {
    Open& open = d_.InTransaction("Delete");
    const WatchedRelation& relation = Checked(m.relation_oid, "Delete", m.old_tuple);
    ForEachPublishedKey(open, relation, "delete", [&](const WatchedKey& key) {
      if (AddOld(open, relation, key, m.old_kind, m.old_tuple[key.column], "delete")) {
        Keep(open, key, "DELETE", m.old_tuple[key.column].data, m.old_kind, m.old_tuple, nullptr);
        Identify(open.changes, relation, key.table, m.old_tuple[key.column].data, m.old_tuple,
                 nullptr);
      }
    });
  }

  void operator()(const TruncateMessage& m) {
    Open& open = d_.InTransaction("Truncate");
    ++d_.decoded_changes_;
    for (std::uint32_t oid : m.relation_oids) {
      const WatchedRelation& relation = d_.Lookup(oid, "Truncate");
      if (relation.watched.empty()) continue;
      open.touched_watched = true;
      open.changes.identities_complete = false;
      open.changes.identities.clear();
      d_.Unmappable("truncate on " + relation.display_name);
    }
  }

  // Origin, Type and Message say nothing about keys.
  void operator()(const OriginMessage&) {}
  void operator()(const TypeMessage&) {}
  void operator()(const LogicalMessage&) {}

 private:
  // The relation of a row change, counted, its tuple checked for width.
  const WatchedRelation& Checked(std::uint32_t oid, const char* message, const Tuple& tuple) {
    ++d_.decoded_changes_;
    const WatchedRelation& relation = d_.Lookup(oid, message);
    CheckWidth(relation, message, tuple);
    return relation;
  }

  static void CheckWidth(const WatchedRelation& relation, const char* message,
                         const Tuple& tuple) {
    if (tuple.size() == relation.column_count) return;
    throw PgoutputError("pgoutput " + std::string(message) + " on " + relation.display_name +
                        ": a tuple of " + std::to_string(tuple.size()) +
                        " columns, its Relation message has " +
                        std::to_string(relation.column_count));
  }

  bool Published(const WatchedRelation& relation, const WatchedKey& key, const char* change) {
    if (key.column >= 0) return true;
    d_.Unmappable(std::string(change) + " on " + relation.display_name + ": column " +
                  key.key_column + " is not published");
    return false;
  }

  // The change as it bears on one key, for provenance: the monitored
  // columns' old (where the old tuple carries them) and new values. An
  // UPDATE keeps the identity columns and the columns whose value changed
  // or is not known to be the same.
  static void Keep(Open& open, const WatchedKey& key, const char* operation,
                   std::string_view key_value, OldTuple old_kind, const Tuple& old_tuple,
                   const Tuple* new_tuple) {
    TransactionChanges& changes = open.changes;
    if (changes.rows.size() >= TransactionChanges::kMaxRowChanges) {
      changes.rows_truncated = true;
      return;
    }
    metrics::RowChange row;
    row.operation = operation;
    row.table = key.table;
    row.key_column = key.key_column;
    row.key = metrics::ValueText::Of(metrics::ValueText::Kind::kText, key_value).Display();
    for (const MonitoredColumn& column : key.monitored) {
      metrics::ColumnChange change;
      change.column = column.name;
      change.before = OldValueOf(old_kind, old_tuple, column.column,
                                 column.in_identity || old_kind == OldTuple::kFull);
      if (new_tuple) change.after = ValueOf((*new_tuple)[column.column]);
      if (column.in_identity) {
        row.identity.push_back(std::move(change));
        continue;
      }
      if (row.operation == "UPDATE") {
        if (change.after.kind == metrics::ValueText::Kind::kUnchanged) continue;
        if (SameValue(change.before, change.after)) continue;
      }
      row.columns.push_back(std::move(change));
    }
    changes.rows.push_back(std::move(row));
  }

  // A change of a watched table touches the transaction even where its
  // key column is not published (that change is unmappable).
  template <typename EachKey>
  void ForEachPublishedKey(Open& open, const WatchedRelation& relation, const char* change,
                           EachKey each_key) {
    for (const WatchedKey& key : relation.watched) {
      open.touched_watched = true;
      if (Published(relation, key, change)) each_key(key);
    }
  }

  void NotCarried(const WatchedRelation& relation, const WatchedKey& key, const char* change) {
    d_.Unmappable(std::string(change) + " on " + relation.display_name + ": replica identity " +
                  ReplicaIdentityName(relation.replica_identity) + " does not carry " +
                  key.key_column);
  }

  // Adds a key value; a value that cannot be one is unmappable.
  bool Add(Open& open, const WatchedRelation& relation, const WatchedKey& key,
           const TupleValue& value, const char* change) {
    std::string why = Unusable(value);
    if (why.empty()) {
      open.changes.keys[key.table].emplace(value.data);
      return true;
    }
    d_.Unmappable(std::string(change) + " on " + relation.display_name + ": " + key.key_column +
                  " " + why);
    return false;
  }

  // The old row's key. In a 'K' tuple the columns outside the replica
  // identity are NULL placeholders: that is "not carried", not a NULL key.
  bool AddOld(Open& open, const WatchedRelation& relation, const WatchedKey& key,
              OldTuple kind, const TupleValue& value, const char* change) {
    if (kind == OldTuple::kKey && !key.in_identity) {
      NotCarried(relation, key, change);
      return false;
    }
    return Add(open, relation, key, value, change);
  }

  ChangeDecoder& d_;
};

ChangeDecoder::ChangeDecoder(std::map<std::string, std::string> tables)
    : tables_(std::move(tables)) {}

ChangeDecoder::ChangeDecoder(std::map<std::string, std::string> tables,
                             std::map<std::uint32_t, CoveredRelation> verified)
    : tables_(std::move(tables)), verified_(std::move(verified)) {}

void ChangeDecoder::Feed(std::string_view message) {
  std::visit(Visitor(*this), ParsePgoutputMessage(message));
}

std::vector<TransactionChanges> ChangeDecoder::TakeCommitted() {
  return std::exchange(committed_, {});
}

void ChangeDecoder::Reset() {
  relations_.clear();
  open_.reset();
  committed_.clear();
}

const WatchedRelation& ChangeDecoder::Lookup(std::uint32_t oid, const char* message) const {
  auto it = relations_.find(oid);
  if (it == relations_.end()) {
    throw PgoutputError("pgoutput " + std::string(message) + " of relation OID " +
                        std::to_string(oid) + ", which no Relation message announced");
  }
  return it->second;
}

ChangeDecoder::Open& ChangeDecoder::InTransaction(const char* message) {
  if (!open_) throw PgoutputError("pgoutput " + std::string(message) + " outside a transaction");
  return *open_;
}

void ChangeDecoder::Unmappable(const std::string& reason) {
  if (unmappable_.empty()) unmappable_ = reason;
}

void ChangeDecoder::CheckCoverage(const RelationMessage& message,
                                  const WatchedRelation& relation) {
  if (!coverage_change_.empty()) return;
  std::string oid = std::to_string(message.oid);
  std::string decoded = message.namespace_name + "." + message.name;
  auto it = verified_->find(message.oid);
  if (it != verified_->end()) {
    if (it->second.schema != message.namespace_name || it->second.name != message.name) {
      coverage_change_ = it->second.Qualified() + " (OID " + oid + ") was renamed to " +
                         decoded + " (in the changes decoded)";
    }
  } else if (!relation.watched.empty()) {
    coverage_change_ = "changes of " + decoded + " come from OID " + oid +
                       ", not from a relation verified for the watched tables";
  }
}

}  // namespace seatwatch::changes
