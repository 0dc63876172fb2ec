#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/connection>

#include "support/daemon_process.h"
#include "support/scratch_db.h"

// Helpers for the end-to-end tests of incremental mode: the built daemon
// with the shipped booking pack and [changes] on, a booking database set up
// as the DBA script does, a correct claim -> pay -> confirm load, the six
// booking violations (inject + repair), and server settings restored even
// when a test fails.
namespace seatwatch::testing {

// Every sample of a /metrics text whose series starts with `prefix`:
// "name{labels}" -> value.
std::map<std::string, double> SeriesWithPrefix(const std::string& metrics_text,
                                               const std::string& prefix);

// Every full pass of a check in a /metrics text, whatever the reason.
double AllPasses(const std::string& metrics_text, const std::string& check);

// The first column of the first row of `sql` on the scratch cluster's
// "postgres" database, as its superuser ("" for no row or NULL).
std::string AdminScalar(const std::string& sql);
// Runs queries/booking/changes-setup.sql on `db` with psql, as a DBA would.
void RunChangesSetup(const ScratchDatabase& db);

// What a DBA does for any config: `seatwatch --config CONFIG --print-setup`
// into DIR/setup.sql, then psql on `db`. Throws with the output on failure.
void RunPrintedSetup(const ScratchDatabase& db, const std::string& config,
                     const std::string& dir);

// Seats for the load and the injections: events 1..kEvents, the load's seats
// "T<thread>_<n>" and the injections' seats "V1".."V12" in every event; and
// `history_seats` seats of a past event (kHistoryEvent) that nothing
// touches, so that a full pass costs what it costs on a real database
// (mostly history) and more than a drain: [changes] drops its slot when a
// drain costs more than the last full pass.
inline constexpr int kEvents = 8;
inline constexpr int kHistoryEvent = 999;
inline constexpr int kHistorySeats = 400000;
void SeedBookingSeats(const ScratchDatabase& db, int threads, int flows_per_thread,
                      int history_seats = kHistorySeats);

// ALTER SYSTEM SET name = value + pg_reload_conf(); the destructor (or
// Reset()) runs ALTER SYSTEM RESET + pg_reload_conf(), whatever happened.
class ServerSetting {
 public:
  ServerSetting(std::string name, const std::string& value);
  ~ServerSetting();
  void Reset();

 private:
  std::string name_;
  bool set_ = false;
};

// The shipped config (config/seatwatch.toml) with the booking pack opted in,
// [changes] enabled = true with `changes_keys` (TOML lines) replacing the
// shipped [changes] table, [locks] off, polls at 1s. Returns its path.
std::string WriteIncrementalConfig(const std::string& dir, int port,
                                   const std::string& changes_keys = "enabled = true\n"
                                                                     "interval = \"1s\"\n");

// The daemon on `db` (SEATWATCH_DSN) with its change feed on
// SEATWATCH_CHANGES_DSN (`changes_dsn`, the REPLICATION role's by default).
class IncrementalDaemon {
 public:
  IncrementalDaemon(const ScratchDatabase& db,
                    const std::string& changes_keys = "enabled = true\ninterval = \"1s\"\n",
                    const std::string& changes_dsn = "");
  std::string Metrics() const;
  double Value(const std::string& series) const;
  // Both booking checks report seatwatch_check_mode{mode="incremental"} 1.
  bool Incremental(const std::string& metrics_text) const;
  bool WaitIncremental(std::chrono::milliseconds timeout) const;
  std::string ApiInvariants() const;
  DaemonProcess& process() { return *process_; }
  const std::string& config_path() const { return config_; }
  int port() const { return port_; }
  // The pid of the change feed's walsender, which holds its slot
  // (application_name "seatwatch-changes") in this database, 0 if none.
  int ChangesBackendPid() const;
  // The slot that walsender holds, "" if none.
  std::string ChangesSlot() const;

 private:
  const ScratchDatabase& db_;
  std::string dir_;
  int port_;
  std::string config_;
  std::unique_ptr<DaemonProcess> process_;
};

// The six booking invariants, each with an injection on one event's "V"
// seats (committed as one transaction), the exact count it gives, and its
// repair. Prepare() makes the correct sales some of them corrupt (before
// the daemon starts, or at any time: they are correct).
struct Violation {
  std::string invariant;
  int event_id = 0;
  double count = 0;
  std::string prepare_sql;
  std::string inject_sql;
  std::string repair_sql;
  std::string series() const;  // seatwatch_invariant_violations{invariant=..,event_id=..}
};
std::vector<Violation> SixViolations(const std::vector<int>& events);
extern const char* const kInvariants[6];

// Whether every booking invariant is ok (1) in `metrics_text`; `bad` names
// the ones that are not (absent counts as not ok).
bool AllInvariantsOk(const std::string& metrics_text, std::string* bad = nullptr);

// A correct booking load: `threads` writers, each on its own connection,
// running claim -> payment started -> confirm flows (and, every
// `lapse_every`-th flow, a hold that lapses after ~1 s with its payment
// left started), at random over events 1..kEvents, on its own seats.
class BookingLoad {
 public:
  BookingLoad(const ScratchDatabase& db, int threads, int flows_per_thread,
              std::uint32_t seed, int lapse_every = 7);
  ~BookingLoad();
  void Stop();  // waits for the writers
  int flows() const { return flows_.load(); }
  int lapsed() const { return lapsed_.load(); }
  int errors() const { return errors_.load(); }
  std::string first_error() const;
  bool done() const { return finished_.load() == threads_; }

 private:
  void Run(int thread, std::uint32_t seed);

  const ScratchDatabase& db_;
  int threads_;
  int flows_per_thread_;
  int lapse_every_;
  std::atomic<bool> stop_{false};
  std::atomic<int> flows_{0};
  std::atomic<int> lapsed_{0};
  std::atomic<int> errors_{0};
  std::atomic<int> finished_{0};
  mutable std::mutex mutex_;
  std::string first_error_;
  std::vector<std::thread> workers_;
};

// A session whose COMMIT waits for a synchronous standby (synchronous_commit
// = on in this session): with synchronous_standby_names naming a standby
// that does not exist, its commit is flushed (decodable) but stays invisible
// until the setting is reset. Runs `sql` + COMMIT on its own thread.
class HangingCommit {
 public:
  HangingCommit(const ScratchDatabase& db, const std::string& sql);
  ~HangingCommit();
  int backend_pid() const { return pid_; }
  std::uint64_t xid() const { return xid_; }
  // Waits until the commit waits for the standby (wait_event SyncRep).
  bool WaitHanging(std::chrono::milliseconds timeout) const;
  // Waits for the COMMIT to return; true when it succeeded.
  bool Join(std::chrono::milliseconds timeout);

 private:
  const ScratchDatabase& db_;
  std::unique_ptr<pqxx::connection> connection_;
  int pid_ = 0;
  std::uint64_t xid_ = 0;
  std::atomic<bool> started_{false};  // the statements ran (or failed), COMMIT next
  std::atomic<int> result_{0};  // 0 running, 1 committed, -1 failed
  std::thread thread_;
};


}  // namespace seatwatch::testing
