#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace seatwatch::changes {

// A relation the coverage follows: one a watched table's name matches, or
// one verified before under such a name (renamed since).
struct CoveredRelation {
  std::uint32_t oid = 0;
  std::string schema;
  std::string name;
  // The catalog rows that put it in the publication (pg_publication_rel of
  // it or of a partition ancestor, pg_publication_namespace of their
  // schemas) as "r<oid>/<xmin>" or "s<oid>/<xmin>", sorted; empty: not in
  // it (unless the publication is FOR ALL TABLES). A table dropped from the
  // publication and added back, or its column list changed, has other rows.
  std::string membership;

  std::string Qualified() const { return schema + "." + name; }
  bool operator==(const CoveredRelation& other) const {
    return oid == other.oid && schema == other.schema && name == other.name &&
           membership == other.membership;
  }
};

// What the publication covers of the watched tables, as the catalog says
// it. pgoutput applies a publication change from the WAL position where it
// was made, so the feed compares this, read after each drain, with what it
// read before it verified the publication and made its slot: any difference
// means changes may have been decoded under another coverage than the one
// verified. A plain value.
struct Coverage {
  bool publication_exists = false;
  // "<oid>/<xmin>" of the pg_publication row: every ALTER PUBLICATION ...
  // SET makes a new one, also one altered and altered back between drains.
  std::string publication_row;
  bool all_tables = false;
  bool inserts = false;
  bool updates = false;
  bool deletes = false;
  bool truncates = false;
  std::vector<CoveredRelation> relations;  // by OID

  bool operator==(const Coverage& other) const;
  bool operator!=(const Coverage& other) const { return !(*this == other); }
};

// What changed from `verified` to `now`, in words, each change once, "; "
// between them ("publication seatwatch no longer publishes deletes",
// "public.tickets was removed from publication seatwatch", "public.tickets
// was renamed to public.tickets_away"); empty when nothing did. Pure.
std::string DescribeCoverageChange(const Coverage& verified, const Coverage& now,
                                   const std::string& publication);

// Schema and name of each relation of `coverage` by OID: what the decoder
// expects of pgoutput's Relation messages.
std::map<std::uint32_t, CoveredRelation> RelationsByOid(const Coverage& coverage);

}  // namespace seatwatch::changes
