#pragma once

#include <memory>
#include <string>

#include <pqxx/connection>

namespace seatwatch::testing {

// libpq connection string for a database of the scratch cluster that the
// CTest fixture started (TEST_PG_DIR holds its port and socket).
std::string ScratchDsn(const std::string& dbname);

// The role the change feed connects as: LOGIN REPLICATION, nothing else.
inline constexpr const char* kChangesRole = "seatwatch_changes";
// libpq connection string for `dbname` as kChangesRole, creating the role
// first if the cluster lacks it (roles are cluster-wide: it is kept, it owns
// nothing). Trust authentication: no password.
std::string ScratchChangesDsn(const std::string& dbname);

// A database of its own for one test: created fresh (dropping any leftover
// of the same name), optionally with the booking schema loaded, dropped when
// the object goes away.
class ScratchDatabase {
 public:
  enum class Schema { kNone, kBooking, kCapacity };
  explicit ScratchDatabase(const std::string& name, Schema schema = Schema::kBooking);
  ~ScratchDatabase();

  const std::string& name() const { return name_; }
  std::string dsn() const { return ScratchDsn(name_); }
  // As the change feed's role (see ScratchChangesDsn).
  std::string changes_dsn() const { return ScratchChangesDsn(name_); }
  // A new connection to this database (for sessions a test drives).
  std::unique_ptr<pqxx::connection> Connect() const;
  // Runs SQL in its own autocommitted transaction.
  void Exec(const std::string& sql) const;
  // The first column of the first row, as text.
  std::string Scalar(const std::string& sql) const;
  // Loads a .sql file of the repository (path relative to the root).
  void LoadFile(const std::string& relative_path) const;

 private:
  std::string name_;
};

}  // namespace seatwatch::testing
