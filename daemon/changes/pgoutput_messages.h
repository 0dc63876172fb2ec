#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace seatwatch::changes {

// The messages of pgoutput protocol version 1 (PostgreSQL docs, "Logical
// Replication Message Formats"), one struct each, as ParsePgoutputMessage
// returns them. Tuple values and Message contents are views into the parsed
// bytes (a 2 MB value is not copied): they are valid only while those bytes
// are. Relation and Type own their strings: the decoder caches relations.

struct BeginMessage {
  std::uint64_t final_lsn = 0;   // the LSN of the commit record
  std::int64_t commit_time = 0;  // microseconds since 2000-01-01
  std::uint32_t xid = 0;
};

struct CommitMessage {
  std::uint8_t flags = 0;
  std::uint64_t commit_lsn = 0;
  std::uint64_t end_lsn = 0;
  std::int64_t commit_time = 0;
};

struct OriginMessage {
  std::uint64_t commit_lsn = 0;  // on the origin server
  std::string name;
};

struct RelationColumn {
  bool key = false;  // flag bit 1: part of the replica identity
  std::string name;
  std::uint32_t type_oid = 0;
  std::int32_t type_modifier = -1;
};

// relreplident of pg_class.
enum class ReplicaIdentity : char {
  kDefault = 'd',
  kNothing = 'n',
  kFull = 'f',
  kIndex = 'i',
};

struct RelationMessage {
  std::uint32_t oid = 0;
  std::string namespace_name;  // empty for pg_catalog
  std::string name;
  ReplicaIdentity replica_identity = ReplicaIdentity::kDefault;
  // The published columns (a column list or generated columns leave some
  // out), in the order of every tuple of this relation.
  std::vector<RelationColumn> columns;
};

struct TypeMessage {
  std::uint32_t oid = 0;
  std::string namespace_name;
  std::string name;
};

struct TupleValue {
  enum class Kind : char {
    kNull = 'n',
    kUnchangedToast = 'u',  // an out-of-line value the change did not touch
    kText = 't',
    kBinary = 'b',
  };
  Kind kind = Kind::kNull;
  std::string_view data;  // kText and kBinary only
};
using Tuple = std::vector<TupleValue>;

// Which old row an Update or Delete carries: none, the replica identity
// columns ('K', the other columns as NULL) or the whole old row ('O', REPLICA
// IDENTITY FULL).
enum class OldTuple : char { kNone = 0, kKey = 'K', kFull = 'O' };

struct InsertMessage {
  std::uint32_t relation_oid = 0;
  Tuple new_tuple;
};

struct UpdateMessage {
  std::uint32_t relation_oid = 0;
  OldTuple old_kind = OldTuple::kNone;
  Tuple old_tuple;  // empty when old_kind is kNone
  Tuple new_tuple;
};

struct DeleteMessage {
  std::uint32_t relation_oid = 0;
  OldTuple old_kind = OldTuple::kKey;  // never kNone
  Tuple old_tuple;
};

struct TruncateMessage {
  static constexpr std::uint8_t kCascade = 1;
  static constexpr std::uint8_t kRestartIdentity = 2;
  std::uint8_t options = 0;
  std::vector<std::uint32_t> relation_oids;
};

// pg_logical_emit_message ('M'); sent only with the 'messages' option.
struct LogicalMessage {
  bool transactional = false;
  std::uint64_t lsn = 0;
  std::string prefix;
  std::string_view content;
};

using PgoutputMessage =
    std::variant<BeginMessage, CommitMessage, OriginMessage, RelationMessage, TypeMessage,
                 InsertMessage, UpdateMessage, DeleteMessage, TruncateMessage, LogicalMessage>;

}  // namespace seatwatch::changes
