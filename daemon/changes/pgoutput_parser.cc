#include "changes/pgoutput_parser.h"

#include <string>

#include "changes/pgoutput_reader.h"

namespace seatwatch::changes {

namespace {

BeginMessage ReadBegin(PgoutputReader& in) {
  BeginMessage m;
  m.final_lsn = in.UInt64("final LSN");
  m.commit_time = in.Int64("commit timestamp");
  m.xid = in.UInt32("xid");
  return m;
}

CommitMessage ReadCommit(PgoutputReader& in) {
  CommitMessage m;
  m.flags = in.Byte("flags");
  m.commit_lsn = in.UInt64("commit LSN");
  m.end_lsn = in.UInt64("end LSN");
  m.commit_time = in.Int64("commit timestamp");
  return m;
}

OriginMessage ReadOrigin(PgoutputReader& in) {
  OriginMessage m;
  m.commit_lsn = in.UInt64("origin commit LSN");
  m.name = in.String("origin name");
  return m;
}

ReplicaIdentity ReadReplicaIdentity(PgoutputReader& in) {
  std::size_t at = in.offset();
  unsigned char setting = in.Byte("replica identity");
  switch (setting) {
    case 'd':
    case 'n':
    case 'f':
    case 'i':
      return static_cast<ReplicaIdentity>(setting);
    default:
      in.Fail(at, "unknown replica identity " + PgoutputReader::DescribeByte(setting));
  }
}

RelationMessage ReadRelation(PgoutputReader& in) {
  RelationMessage m;
  m.oid = in.UInt32("relation OID");
  m.namespace_name = in.String("namespace");
  m.name = in.String("relation name");
  m.replica_identity = ReadReplicaIdentity(in);
  std::size_t at = in.offset();
  std::int16_t count = in.Int16("column count");
  if (count < 0) in.Fail(at, "negative column count " + std::to_string(count));
  // A column takes at least 10 bytes (flags, an empty name's NUL, type OID,
  // type modifier): check before sizing the vector.
  if (static_cast<std::size_t>(count) * 10 > in.remaining()) {
    in.Fail(at, std::to_string(count) + " columns in " + std::to_string(in.remaining()) +
                    " bytes");
  }
  m.columns.resize(static_cast<std::size_t>(count));
  for (RelationColumn& column : m.columns) {
    column.key = (in.Byte("column flags") & 1) != 0;
    column.name = in.String("column name");
    column.type_oid = in.UInt32("column type OID");
    column.type_modifier = in.Int32("column type modifier");
  }
  return m;
}

TypeMessage ReadType(PgoutputReader& in) {
  TypeMessage m;
  m.oid = in.UInt32("type OID");
  m.namespace_name = in.String("namespace");
  m.name = in.String("type name");
  return m;
}

// The byte that starts a TupleData: must be one of `allowed`.
char ReadTupleTag(PgoutputReader& in, std::string_view allowed) {
  std::size_t at = in.offset();
  char tag = static_cast<char>(in.Byte("tuple tag"));
  if (allowed.find(tag) == std::string_view::npos) {
    in.Fail(at, "tuple tag " + PgoutputReader::DescribeByte(static_cast<unsigned char>(tag)) +
                    ", expected one of " + std::string(allowed));
  }
  return tag;
}

InsertMessage ReadInsert(PgoutputReader& in) {
  InsertMessage m;
  m.relation_oid = in.UInt32("relation OID");
  ReadTupleTag(in, "N");
  m.new_tuple = in.TupleData();
  return m;
}

UpdateMessage ReadUpdate(PgoutputReader& in) {
  UpdateMessage m;
  m.relation_oid = in.UInt32("relation OID");
  char tag = ReadTupleTag(in, "KON");
  if (tag != 'N') {
    m.old_kind = static_cast<OldTuple>(tag);
    m.old_tuple = in.TupleData();
    ReadTupleTag(in, "N");
  }
  m.new_tuple = in.TupleData();
  return m;
}

DeleteMessage ReadDelete(PgoutputReader& in) {
  DeleteMessage m;
  m.relation_oid = in.UInt32("relation OID");
  m.old_kind = static_cast<OldTuple>(ReadTupleTag(in, "KO"));
  m.old_tuple = in.TupleData();
  return m;
}

TruncateMessage ReadTruncate(PgoutputReader& in) {
  TruncateMessage m;
  std::size_t at = in.offset();
  std::int32_t count = in.Int32("relation count");
  m.options = in.Byte("options");
  if (count < 0 || static_cast<std::size_t>(count) > in.remaining() / 4) {
    in.Fail(at, std::to_string(count) + " relations in " + std::to_string(in.remaining()) +
                    " bytes");
  }
  m.relation_oids.resize(static_cast<std::size_t>(count));
  for (std::uint32_t& oid : m.relation_oids) oid = in.UInt32("relation OID");
  return m;
}

LogicalMessage ReadLogicalMessage(PgoutputReader& in) {
  // Protocol version 1: no xid field (that is for streamed transactions).
  LogicalMessage m;
  m.transactional = (in.Byte("flags") & 1) != 0;
  m.lsn = in.UInt64("message LSN");
  m.prefix = in.String("prefix");
  std::size_t at = in.offset();
  std::int32_t length = in.Int32("content length");
  if (length < 0) in.Fail(at, "negative content length " + std::to_string(length));
  m.content = in.Bytes(static_cast<std::size_t>(length), "content");
  return m;
}

const char* NameOfType(char type) {
  switch (type) {
    case 'B': return "Begin";
    case 'C': return "Commit";
    case 'O': return "Origin";
    case 'R': return "Relation";
    case 'Y': return "Type";
    case 'I': return "Insert";
    case 'U': return "Update";
    case 'D': return "Delete";
    case 'T': return "Truncate";
    case 'M': return "Message";
    default: return nullptr;
  }
}

PgoutputMessage ReadBody(char type, PgoutputReader& in) {
  switch (type) {
    case 'B': return ReadBegin(in);
    case 'C': return ReadCommit(in);
    case 'O': return ReadOrigin(in);
    case 'R': return ReadRelation(in);
    case 'Y': return ReadType(in);
    case 'I': return ReadInsert(in);
    case 'U': return ReadUpdate(in);
    case 'D': return ReadDelete(in);
    case 'T': return ReadTruncate(in);
    default: return ReadLogicalMessage(in);  // 'M': NameOfType knows no other
  }
}

}  // namespace

PgoutputMessage ParsePgoutputMessage(std::string_view bytes) {
  if (bytes.empty()) throw PgoutputError("pgoutput: empty message");
  char type = bytes[0];
  const char* name = NameOfType(type);
  if (name == nullptr) {
    throw PgoutputError("pgoutput: unknown message type " +
                        PgoutputReader::DescribeByte(static_cast<unsigned char>(type)) +
                        " at byte 0");
  }
  PgoutputReader in(bytes, name);
  in.Byte("message type");
  PgoutputMessage message = ReadBody(type, in);
  in.ExpectEnd();
  return message;
}

const char* PgoutputMessageName(const PgoutputMessage& message) {
  static const char* const kNames[] = {"Begin",  "Commit", "Origin", "Relation", "Type",
                                       "Insert", "Update", "Delete", "Truncate", "Message"};
  static_assert(sizeof kNames / sizeof kNames[0] == std::variant_size_v<PgoutputMessage>);
  return kNames[message.index()];
}

}  // namespace seatwatch::changes
