#include "changes/coverage_reader.h"

#include <type_traits>

#include <pqxx/nontransaction>
#include <pqxx/result>

#include "changes/watched_relation.h"
#include "db/named_statement.h"

namespace seatwatch::changes {

namespace {

constexpr const char* kPublicationStatement = "seatwatch_coverage_publication";
constexpr const char* kRelationsStatement = "seatwatch_coverage_relations";

constexpr const char* kPublicationSql =
    "SELECT oid::text || '/' || xmin::text, puballtables, pubinsert, pubupdate, pubdelete, "
    "pubtruncate FROM pg_publication WHERE pubname = $1";

// Each relation named like a watched table ($2, names without schema) or of
// a known OID ($3), with the publication's rows that put it (or a partition
// ancestor of it, or their schema) in the publication $1.
constexpr const char* kRelationsSql = R"SQL(
SELECT c.oid::bigint, n.nspname, c.relname,
       coalesce((SELECT string_agg(m.row, ',' ORDER BY m.row) FROM (
           SELECT 'r' || pr.oid::text || '/' || pr.xmin::text AS row
           FROM pg_publication_rel pr
           WHERE pr.prpubid = p.oid
             AND (pr.prrelid = c.oid
                  OR pr.prrelid IN (SELECT relid FROM pg_partition_ancestors(c.oid)))
           UNION ALL
           SELECT 's' || pn.oid::text || '/' || pn.xmin::text
           FROM pg_publication_namespace pn
           WHERE pn.pnpubid = p.oid
             AND (pn.pnnspid = c.relnamespace
                  OR pn.pnnspid IN (SELECT a.relnamespace FROM pg_class a
                                    WHERE a.oid IN (SELECT relid
                                                    FROM pg_partition_ancestors(c.oid))))
       ) m), '') AS membership
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_publication p ON p.pubname = $1
WHERE c.relkind IN ('r', 'p')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND (c.relname = ANY ($2::text[]) OR c.oid = ANY ($3::oid[]))
ORDER BY c.oid
)SQL";

// A PostgreSQL array literal of plain words (watched names are
// [a-z_][a-z0-9_$]*, OIDs digits): nothing to quote.
template <typename Items>
std::string ArrayLiteral(const Items& items) {
  std::string out = "{";
  for (const auto& item : items) {
    if (out.size() > 1) out += ",";
    if constexpr (std::is_same_v<std::decay_t<decltype(item)>, std::string>) {
      out += item;
    } else {
      out += std::to_string(item);
    }
  }
  return out + "}";
}

}  // namespace

Coverage ReadCoverage(pqxx::connection& connection, const std::string& publication,
                      const std::map<std::string, std::string>& tables,
                      const std::set<std::uint32_t>& known_oids) {
  std::set<std::string> names;
  for (const auto& [table, key] : tables) {
    auto dot = table.find('.');
    names.insert(dot == std::string::npos ? table : table.substr(dot + 1));
  }
  Coverage coverage;
  // Every drain reads these on the feed's plain session: named, the server
  // plans them once (planning these catalog joins cost more than running
  // them).
  db::PrepareOn(connection, kPublicationStatement, kPublicationSql);
  db::PrepareOn(connection, kRelationsStatement, kRelationsSql);
  pqxx::nontransaction tx(connection, "changes_coverage");
  pqxx::result pub = tx.exec_prepared(kPublicationStatement, publication);
  if (!pub.empty()) {
    coverage.publication_exists = true;
    coverage.publication_row = pub[0][0].c_str();
    coverage.all_tables = pub[0][1].as<bool>();
    coverage.inserts = pub[0][2].as<bool>();
    coverage.updates = pub[0][3].as<bool>();
    coverage.deletes = pub[0][4].as<bool>();
    coverage.truncates = pub[0][5].as<bool>();
  }
  for (const auto& row : tx.exec_prepared(kRelationsStatement, publication, ArrayLiteral(names),
                                          ArrayLiteral(known_oids))) {
    CoveredRelation relation;
    relation.oid = row[0].as<std::uint32_t>();
    relation.schema = row[1].c_str();
    relation.name = row[2].c_str();
    relation.membership = row[3].c_str();
    bool watched = known_oids.count(relation.oid) > 0;
    for (const auto& [table, key] : tables) {
      watched = watched || TableNameMatches(table, relation.schema, relation.name);
    }
    if (watched) coverage.relations.push_back(std::move(relation));
  }
  return coverage;
}

}  // namespace seatwatch::changes
