#pragma once

#include "metrics/provenance.h"
#include "util/json_writer.h"

namespace seatwatch::metrics {

// A key's provenance as /api/invariants serves it:
// {"commits": [{"xid", "commit_lsn", "committed_at", "commit_timestamp_seconds",
//   "session": {"application_name", "user", "client_addr"} | "not seen",
//   "changes": [{"operation", "table", "key": {column: value}, "identity": {col: {old, new}},
//                "columns": {col: {"old", "new"}}, "text"}], "truncated"}],
//  "earlier_omitted"}. A value the WAL did not carry is left out; NULL is
// null; a cut value ends in "…" with "cut": true beside it.
void WriteProvenance(util::JsonWriter& json, const Provenance& provenance);

}  // namespace seatwatch::metrics
