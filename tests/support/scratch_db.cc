#include "support/scratch_db.h"

#include <cstdlib>
#include <stdexcept>

#include <pqxx/nontransaction>
#include <pqxx/transaction>

#include "support/test_env.h"

namespace seatwatch::testing {

namespace {

std::string Trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

void AdminExec(const std::string& sql) {
  pqxx::connection admin(ScratchDsn("postgres"));
  pqxx::nontransaction tx(admin);
  tx.exec0(sql);
}

}  // namespace

std::string ScratchDsn(const std::string& dbname) {
  std::string dir = ScratchPgDir();
  return "host=" + dir + "/sock port=" + Trim(ReadFile(dir + "/port")) +
         " user=postgres dbname=" + dbname;
}

std::string ScratchChangesDsn(const std::string& dbname) {
  // Idempotent, and safe against a concurrent creator; ALTER restores the
  // attributes should a test have changed them.
  AdminExec(std::string("DO $$ BEGIN CREATE ROLE ") + kChangesRole +
            " LOGIN REPLICATION; EXCEPTION WHEN duplicate_object OR unique_violation THEN "
            "NULL; END $$");
  AdminExec(std::string("ALTER ROLE ") + kChangesRole + " LOGIN REPLICATION");
  std::string dir = ScratchPgDir();
  return "host=" + dir + "/sock port=" + Trim(ReadFile(dir + "/port")) + " user=" +
         kChangesRole + " dbname=" + dbname;
}

ScratchDatabase::ScratchDatabase(const std::string& name, Schema schema) : name_(name) {
  AdminExec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  AdminExec("CREATE DATABASE " + name_);
  Exec("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  if (schema == Schema::kBooking) LoadFile("queries/booking/schema.sql");
  if (schema == Schema::kCapacity) LoadFile("queries/capacity/schema.sql");
}

ScratchDatabase::~ScratchDatabase() {
  try {
    AdminExec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  } catch (...) {
    // The cluster may be down (a test restarts it); the next run drops it.
  }
}

std::unique_ptr<pqxx::connection> ScratchDatabase::Connect() const {
  return std::make_unique<pqxx::connection>(dsn());
}

void ScratchDatabase::Exec(const std::string& sql) const {
  pqxx::connection connection(dsn());
  pqxx::nontransaction tx(connection);
  tx.exec(sql);
}

std::string ScratchDatabase::Scalar(const std::string& sql) const {
  pqxx::connection connection(dsn());
  pqxx::nontransaction tx(connection);
  auto result = tx.exec(sql);
  if (result.empty() || result[0][0].is_null()) return "";
  return result[0][0].c_str();
}

void ScratchDatabase::LoadFile(const std::string& relative_path) const {
  Exec(ReadFile(SourceDir() + "/" + relative_path));
}

}  // namespace seatwatch::testing
