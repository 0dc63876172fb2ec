#include "changes/publication_inspector.h"

#include <pqxx/nontransaction>
#include <pqxx/result>

namespace seatwatch::changes {

namespace {

std::string IdentityName(const std::string& code) {
  if (code == "d") return "DEFAULT";
  if (code == "n") return "NOTHING";
  if (code == "f") return "FULL";
  if (code == "i") return "USING INDEX";
  return code;
}

// Each relation a watched table names, with its membership of the
// publication (and whether the column list carries the key) and what its
// replica identity carries. $1 table name, $2 schema or '', $3 key column,
// $4 publication.
constexpr const char* kTableSql = R"SQL(
SELECT n.nspname, c.relname, c.relreplident::text,
       pt.attnames IS NOT NULL AS published,
       coalesce($3 = ANY (pt.attnames::text[]), false) AS key_published,
       CASE c.relreplident
         WHEN 'f' THEN true
         WHEN 'n' THEN false
         ELSE EXISTS (
           SELECT 1 FROM pg_index i
           JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey::int2[])
           WHERE i.indrelid = c.oid AND a.attname = $3
             AND CASE c.relreplident WHEN 'd' THEN i.indisprimary ELSE i.indisreplident END)
       END AS key_in_identity,
       CASE c.relreplident
         WHEN 'f' THEN true
         WHEN 'n' THEN false
         ELSE EXISTS (
           SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid
             AND CASE c.relreplident WHEN 'd' THEN i.indisprimary ELSE i.indisreplident END)
       END AS has_identity
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_publication_tables pt
  ON pt.pubname = $4 AND pt.schemaname = n.nspname AND pt.tablename = c.relname
WHERE c.relkind IN ('r', 'p') AND c.relname = $1 AND ($2 = '' OR n.nspname = $2)
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
ORDER BY 1, 2
)SQL";

}  // namespace

std::string FeedVerdict::Describe() const {
  // Off: what could not be mapped does not matter until the blocker goes.
  if (!usable) return "off: " + off_reason;
  std::string text = "on";
  for (const auto& kind : unmappable) text += "\n  cannot map: " + kind;
  for (const auto& warning : warnings) text += "\n  warning: " + warning;
  return text;
}

FeedVerdict InspectPublication(pqxx::connection& connection, const std::string& publication,
                               const std::map<std::string, std::string>& tables) {
  FeedVerdict verdict;
  pqxx::nontransaction tx(connection, "changes_inspect");
  // First: a standby's own wal_level, role and publication all look right
  // (they are the primary's, replayed), yet PostgreSQL 15 refuses to create
  // a logical slot during recovery. Off then; the feed inspects again on a
  // later drain (a new session), so it comes up by itself after a promotion.
  if (tx.exec1("SELECT pg_is_in_recovery()")[0].as<bool>()) {
    verdict.off_reason = kStandbyOffReason;
    return verdict;
  }
  std::string wal_level = tx.exec1("SHOW wal_level")[0].c_str();
  if (wal_level != "logical") {
    verdict.off_reason = "wal_level is " + wal_level +
                         ", not logical (a server restart with wal_level = logical is needed)";
    return verdict;
  }
  pqxx::row role = tx.exec1(
      "SELECT current_user::text, rolreplication OR rolsuper FROM pg_roles "
      "WHERE rolname = current_user");
  if (!role[1].as<bool>()) {
    verdict.off_reason = "role " + std::string(role[0].c_str()) +
                         " has no REPLICATION attribute (ALTER ROLE ... REPLICATION, or give "
                         "[changes] dsn a role that has it)";
    return verdict;
  }
  pqxx::result pub = tx.exec_params(
      "SELECT pubinsert, pubupdate, pubdelete, pubtruncate FROM pg_publication "
      "WHERE pubname = $1",
      publication);
  if (pub.empty()) {
    verdict.off_reason = "publication " + publication +
                         " does not exist (queries/booking/changes-setup.sql makes it)";
    return verdict;
  }
  const char* ops[] = {"insert", "update", "delete"};
  for (int i = 0; i < 3; ++i) {
    if (!pub[0][i].as<bool>()) {
      verdict.off_reason = "publication " + publication + " does not publish " + ops[i] +
                           "s: they would never arrive";
      return verdict;
    }
  }
  if (pub[0][3].as<bool>()) {
    verdict.unmappable.push_back("a truncate of a watched table forces a full pass");
  } else {
    verdict.warnings.push_back("publication " + publication +
                               " does not publish truncates: only the backstop full pass "
                               "sees a truncate of a watched table");
  }
  for (const auto& [table, key] : tables) {
    std::string schema;
    std::string name = table;
    if (auto dot = table.find('.'); dot != std::string::npos) {
      schema = table.substr(0, dot);
      name = table.substr(dot + 1);
    }
    pqxx::result rels = tx.exec_params(kTableSql, name, schema, key, publication);
    if (rels.empty()) {
      verdict.off_reason = "watched table " + table + " does not exist";
      return verdict;
    }
    for (const auto& rel : rels) {
      std::string qualified = std::string(rel[0].c_str()) + "." + rel[1].c_str();
      std::string identity = IdentityName(rel[2].c_str());
      if (!rel[3].as<bool>()) {
        verdict.off_reason = "table " + qualified + " is not in publication " + publication +
                             ": its changes would never arrive";
        return verdict;
      }
      if (!rel[4].as<bool>()) {
        verdict.off_reason = "the column list of " + qualified + " in publication " +
                             publication + " lacks its key column " + key;
        return verdict;
      }
      if (!rel[6].as<bool>()) {
        // The trap: such a table in a publication of updates and deletes
        // makes the application's own UPDATE and DELETE fail.
        verdict.warnings.push_back(
            qualified + " has no replica identity (" + identity + ") while publication " +
            publication +
            " publishes updates and deletes: the application's UPDATE and DELETE on it fail "
            "(queries/booking/changes-setup.sql gives it one)");
      } else if (!rel[5].as<bool>()) {
        verdict.unmappable.push_back("deletes on " + qualified + " under replica identity " +
                                     identity + " (without " + key + ") force a full pass");
        // pgoutput sends the old key only when an identity column changed:
        // without the key in the identity, any update may have moved the row.
        verdict.unmappable.push_back("updates on " + qualified + " under replica identity " +
                                     identity + " (without " + key + ") force a full pass");
      }
    }
  }
  verdict.usable = true;
  return verdict;
}

}  // namespace seatwatch::changes
