#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace seatwatch::metrics {

// Which transaction broke a key: what the change feed decoded of the commits
// that changed the key's rows since its check last found it clean. Only the
// columns the entry's SQL names are kept (the "monitored" columns), each
// value cut to kMaxValueBytes: never a literal of a column the checks do not
// read.

// One value of a monitored column, as the WAL carried it.
struct ValueText {
  enum class Kind : char {
    kAbsent,     // the message does not carry it (no old tuple, a key-only one)
    kNull,
    kText,
    kUnchanged,  // an out-of-line (TOAST) value the change did not touch
    kBinary,
  };
  static constexpr std::size_t kMaxValueBytes = 64;
  Kind kind = Kind::kAbsent;
  std::string text;  // kText, at most kMaxValueBytes (cut on a character)
  bool cut = false;

  static ValueText Of(Kind kind, std::string_view text = {});
  // The text as it is (cut: with "…"), "NULL", "(unchanged)", "(binary)",
  // or "?" when not carried.
  std::string Display() const;
};

struct ColumnChange {
  std::string column;
  ValueText before;
  ValueText after;
};

// One row change of a watched table, as it bears on one key.
struct RowChange {
  std::string operation;  // "INSERT", "UPDATE", "DELETE"
  std::string table;      // the watched table, as configured
  std::string key_column;
  std::string key;
  // The row's identity (its replica identity columns that are monitored),
  // then the other monitored columns: an UPDATE keeps only those whose value
  // changed (or whose old value it does not carry).
  std::vector<ColumnChange> identity;
  std::vector<ColumnChange> columns;
};

// The session a transaction ran in, as pg_stat_activity showed it while the
// transaction held its xid. PostgreSQL records no such thing with a commit:
// a transaction that began and committed between two looks is "not seen".
struct SessionSeen {
  std::string application_name;
  std::string user;
  std::string client_addr;  // "local" for a Unix socket
};

// One committed transaction that changed a key.
struct CommitProvenance {
  std::uint32_t xid = 0;
  std::uint64_t commit_lsn = 0;  // the commit record's LSN, bytes from 0/0
  double commit_unix = 0;        // the commit timestamp (the server's clock)
  std::optional<SessionSeen> session;
  std::vector<RowChange> changes;  // of this key only
  // Changes of this key (or of the transaction, past its cap) not kept.
  bool truncated = false;
};

// What seatwatch knows of why a key is violated: the commits that changed it
// since it was last clean, oldest first.
struct Provenance {
  static constexpr std::size_t kMaxChangesPerKey = 8;
  std::vector<CommitProvenance> commits;
  // Earlier commits of the key that were not kept (its ring or the check's
  // overall cap evicted them).
  std::uint64_t earlier_omitted = 0;
};

// Where space is short (the log line, the status page): the newest
// `at_most` commits, from index `first`, and how many earlier ones (not
// kept, or kept but not shown) go unshown.
struct NewestCommits {
  std::size_t first = 0;
  std::uint64_t earlier = 0;
};
NewestCommits Newest(const Provenance& provenance, std::size_t at_most);

// "0/16B3748", as PostgreSQL writes an LSN.
std::string LsnText(std::uint64_t lsn);

// `UPDATE seats(event_id=1, seat=A12) status held→sold`.
std::string DescribeChange(const RowChange& change);

// The log's one-line account, commit by commit (at most kLoggedCommits, the
// newest; the count of the others first): `xid=… committed_at=… lsn=…
// application=… changes="…"`.
inline constexpr std::size_t kLoggedCommits = 3;
std::string DescribeProvenance(const Provenance& provenance);

// Why a violated key has no provenance: its check is not in incremental
// mode, or the feed handed over no commit of the key since it was clean.
std::string NoProvenanceReason(bool incremental);

// "2026-12-06T21:53:16.123Z".
std::string UtcText(double unix_seconds);

}  // namespace seatwatch::metrics
