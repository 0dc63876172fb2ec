// --print-sql: what each check runs, as the daemon runs it.
#include <iostream>

#include "app/commands.h"

namespace seatwatch::app {

namespace {

std::string Joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

bool Names(const config::QueryConfig& entry, const std::string& name) {
  if (name.empty() || entry.name == name) return true;
  for (const auto& invariant : entry.invariants) {
    if (invariant == name) return true;
  }
  return false;
}

void PrintEntry(const config::QueryConfig& entry, const std::string& only) {
  const char* section = entry.kind == config::QueryConfig::Kind::kInvariant ? "invariant" : "metric";
  std::cout << "-- check " << entry.name << " ([[" << section << "]]";
  if (entry.compiled && entry.kind == config::QueryConfig::Kind::kMetric) {
    std::cout << ", declared: counts read in the pass of check " << entry.pass_of << ")\n";
  } else if (entry.compiled) {
    std::vector<std::string> kinds;
    for (const auto& invariant : entry.invariants) {
      kinds.push_back(invariant + " (" + entry.declared.at(invariant) + ")");
    }
    std::cout << ", declared: " << Joined(kinds) << ")\n";
  } else {
    std::cout << ", hand-written: " << entry.sql_path << ")\n";
  }
  std::cout << "-- labels: " << Joined(entry.labels) << "\n";
  if (entry.incremental()) {
    std::vector<std::string> tables;
    for (const auto& [table, column] : entry.tables) tables.push_back(table + "." + column);
    std::cout << "-- incremental: key " << entry.key << " read in " << Joined(tables)
              << (entry.expiry_column.empty() ? "" : "; rechecked when " + entry.expiry_column + " passes")
              << "\n";
    if (entry.row_terms) {
      std::cout << "-- hot keys followed row by row: yes\n";
    } else if (!entry.not_row_wise.empty()) {
      std::cout << "-- hot keys followed row by row: no (" << entry.not_row_wise << ")\n";
    }
  } else if (!entry.not_incremental.empty()) {
    std::cout << "-- incremental: no, full passes only (" << entry.not_incremental << ")\n";
  }
  std::cout << "\n-- full pass\n" << entry.sql << ";\n";
  if (entry.incremental()) {
    std::cout << "\n-- scoped pass: $1 = the dirty keys (" << entry.key << " values, a text[])\n"
              << entry.scoped_sql << ";\n";
  }
  for (const auto& [invariant, sql] : entry.detail_sql) {
    if (!only.empty() && only != entry.name && only != invariant) continue;
    std::cout << "\n-- detail of " << invariant << ": $1";
    for (size_t i = 1; i < entry.labels.size(); ++i) std::cout << ", $" << i + 1;
    std::cout << " = the violating " << Joined(entry.labels)
              << " values (text[] each); the daemon keeps the first 20 rows\n"
              << sql << ";\n";
  }
}

}  // namespace

int PrintSqlCommand(const config::Config& config, const std::string& name) {
  bool found = false;
  for (const auto& entry : config.queries) {
    if (!Names(entry, name)) continue;
    if (found) std::cout << "\n";
    PrintEntry(entry, name);
    found = true;
  }
  if (!found) {
    std::cerr << "seatwatch: --print-sql: " << config.path << " has no check or invariant named \""
              << name << "\"\n";
    return 2;
  }
  return 0;
}

}  // namespace seatwatch::app
