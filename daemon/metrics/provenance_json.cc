#include "metrics/provenance_json.h"

namespace seatwatch::metrics {

namespace {

void WriteValue(util::JsonWriter& json, const char* name, const ValueText& value) {
  switch (value.kind) {
    case ValueText::Kind::kAbsent: return;  // not carried: no key at all
    case ValueText::Kind::kNull: json.Key(name).Null(); return;
    default: json.Key(name).String(value.Display()); return;
  }
}

void WriteColumns(util::JsonWriter& json, const std::vector<ColumnChange>& columns) {
  json.BeginObject();
  for (const auto& column : columns) {
    json.Key(column.column).BeginObject();
    WriteValue(json, "old", column.before);
    WriteValue(json, "new", column.after);
    if (column.before.cut || column.after.cut) json.Key("cut").Bool(true);
    json.EndObject();
  }
  json.EndObject();
}

}  // namespace

void WriteProvenance(util::JsonWriter& json, const Provenance& provenance) {
  json.BeginObject();
  json.Key("commits").BeginArray();
  for (const auto& commit : provenance.commits) {
    json.BeginObject();
    json.Key("xid").Int(commit.xid);
    json.Key("commit_lsn").String(LsnText(commit.commit_lsn));
    json.Key("committed_at").String(UtcText(commit.commit_unix));
    json.Key("commit_timestamp_seconds").Number(commit.commit_unix);
    if (commit.session) {
      json.Key("session").BeginObject();
      json.Key("application_name").String(commit.session->application_name);
      json.Key("user").String(commit.session->user);
      json.Key("client_addr").String(commit.session->client_addr);
      json.EndObject();
    } else {
      json.Key("session").String("not seen");
    }
    json.Key("changes").BeginArray();
    for (const auto& change : commit.changes) {
      json.BeginObject();
      json.Key("operation").String(change.operation);
      json.Key("table").String(change.table);
      json.Key("key").BeginObject().Key(change.key_column).String(change.key).EndObject();
      json.Key("identity");
      WriteColumns(json, change.identity);
      json.Key("columns");
      WriteColumns(json, change.columns);
      json.Key("text").String(DescribeChange(change));
      json.EndObject();
    }
    json.EndArray();
    if (commit.truncated) json.Key("truncated").Bool(true);
    json.EndObject();
  }
  json.EndArray();
  json.Key("earlier_omitted").Int(static_cast<std::int64_t>(provenance.earlier_omitted));
  json.EndObject();
}

}  // namespace seatwatch::metrics
