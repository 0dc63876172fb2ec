#include "support/incremental_daemon.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include <pqxx/nontransaction>
#include <pqxx/transaction>

#include "support/http_client.h"
#include "support/test_config.h"
#include "support/test_env.h"

namespace seatwatch::testing {

namespace {

using namespace std::chrono_literals;

std::string Str(int value) { return std::to_string(value); }

// One sale the way the application makes it, in one transaction.
std::string CorrectSaleSql(int event_id, const std::string& seat, const std::string& fan,
                           const std::string& key) {
  std::string where = " WHERE event_id = " + Str(event_id) + " AND seat = '" + seat + "'";
  return "BEGIN; UPDATE seats SET status = 'sold', holder = '" + fan +
         "', hold_expires_at = NULL" + where +
         "; INSERT INTO tickets (event_id, seat, fan) VALUES (" + Str(event_id) + ", '" + seat +
         "', '" + fan + "'); INSERT INTO payments (idempotency_key, event_id, seat, fan, "
         "amount_cents, status) VALUES ('" + key + "', " + Str(event_id) + ", '" + seat +
         "', '" + fan + "', 8000, 'confirmed'); COMMIT";
}

}  // namespace

std::string AdminScalar(const std::string& sql) {
  pqxx::connection admin(ScratchDsn("postgres"));
  pqxx::nontransaction tx(admin);
  auto result = tx.exec(sql);
  if (result.empty() || result[0][0].is_null()) return "";
  return result[0][0].c_str();
}

const char* const kInvariants[6] = {
    "sold_seat_without_ticket",         "ticket_without_sold_seat",
    "confirmed_payment_without_ticket", "ticket_without_confirmed_payment",
    "double_confirmed_payment",         "fan_over_limit",
};

std::map<std::string, double> SeriesWithPrefix(const std::string& metrics_text,
                                               const std::string& prefix) {
  std::map<std::string, double> out;
  std::istringstream lines(metrics_text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#' || line.compare(0, prefix.size(), prefix) != 0) continue;
    auto space = line.rfind(' ');
    if (space == std::string::npos) continue;
    out[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return out;
}

double AllPasses(const std::string& metrics_text, const std::string& check) {
  double total = 0;
  for (const auto& [series, value] :
       SeriesWithPrefix(metrics_text, "seatwatch_full_passes_total{check=\"" + check + "\"")) {
    total += value;
  }
  return total;
}

void RunChangesSetup(const ScratchDatabase& db) {
  std::string output;
  int status = RunCommand(SourceDir() + "/scripts/pg-scratch psql " + ScratchPgDir() +
                              " -X -q -v ON_ERROR_STOP=1 -U postgres -d " + db.name() + " -f " +
                              SourceDir() + "/queries/booking/changes-setup.sql 2>&1",
                          &output);
  if (status != 0) throw std::runtime_error("changes-setup.sql failed: " + output);
}

void RunPrintedSetup(const ScratchDatabase& db, const std::string& config,
                     const std::string& dir) {
  std::string script;
  if (RunCommand("'" + SeatwatchBinary() + "' --config '" + config + "' --print-setup 2>&1",
                 &script) != 0) {
    throw std::runtime_error("--print-setup failed: " + script);
  }
  WriteFile(dir + "/setup.sql", script);
  std::string output;
  if (RunCommand("'" + SourceDir() + "/scripts/pg-scratch' psql '" + ScratchPgDir() +
                     "' -X -q -v ON_ERROR_STOP=1 -d " + db.name() + " -f '" + dir +
                     "/setup.sql' 2>&1",
                 &output) != 0) {
    throw std::runtime_error("the printed setup script failed: " + output);
  }
}

void SeedBookingSeats(const ScratchDatabase& db, int threads, int flows_per_thread,
                      int history_seats) {
  db.Exec("INSERT INTO seats (event_id, seat) SELECT e, 'T' || t || '_' || i "
          "FROM generate_series(1, " + Str(kEvents) + ") e, generate_series(0, " +
          Str(threads - 1) + ") t, generate_series(0, " + Str(flows_per_thread - 1) + ") i");
  db.Exec("INSERT INTO seats (event_id, seat) SELECT e, 'V' || n "
          "FROM generate_series(1, " + Str(kEvents) + ") e, generate_series(1, 12) n");
  if (history_seats > 0) {
    db.Exec("INSERT INTO seats (event_id, seat) SELECT " + Str(kHistoryEvent) +
            ", 'H' || g FROM generate_series(1, " + Str(history_seats) + ") g");
  }
  db.Exec("VACUUM ANALYZE seats");
}

ServerSetting::ServerSetting(std::string name, const std::string& value)
    : name_(std::move(name)) {
  {
    pqxx::connection admin(ScratchDsn("postgres"));
    pqxx::nontransaction tx(admin);
    tx.exec("ALTER SYSTEM SET " + name_ + " = " + value);
    set_ = true;
    tx.exec("SELECT pg_reload_conf()");
  }
  // The reload is asynchronous: wait until a new session sees it.
  std::string bare = value;
  if (bare.size() >= 2 && bare.front() == '\'') bare = bare.substr(1, bare.size() - 2);
  WaitFor([&] { return AdminScalar("SELECT current_setting('" + name_ + "')") == bare; }, 10s);
}

ServerSetting::~ServerSetting() {
  try {
    Reset();
  } catch (...) {
    // The cluster may be down; the next pg.start begins from a fresh one.
  }
}

void ServerSetting::Reset() {
  if (!set_) return;
  {
    pqxx::connection admin(ScratchDsn("postgres"));
    pqxx::nontransaction tx(admin);
    tx.exec("ALTER SYSTEM RESET " + name_);
    tx.exec("SELECT pg_reload_conf()");
  }
  set_ = false;
  WaitFor([&] {
    return AdminScalar("SELECT setting = boot_val FROM pg_settings WHERE name = '" + name_ +
                       "'") == "t";
  }, 10s);
}

std::string WriteIncrementalConfig(const std::string& dir, int port,
                                   const std::string& changes_keys) {
  std::string path = WriteShippedConfig(dir, "1s", port);
  std::string text = ReadFile(path);
  auto at = text.find("\n[changes]\n");
  if (at == std::string::npos) throw std::runtime_error("the shipped config has no [changes]");
  text = text.substr(0, at) + "\n[changes]\n" + changes_keys;
  auto locks = text.find("[locks]\nenabled = true");
  if (locks != std::string::npos) text.replace(locks, 22, "[locks]\nenabled = false");
  WriteFile(path, text);
  return path;
}

IncrementalDaemon::IncrementalDaemon(const ScratchDatabase& db, const std::string& changes_keys,
                                     const std::string& changes_dsn)
    : db_(db), dir_(MakeTempDir("seatwatch-incremental")), port_(FreePort()) {
  config_ = WriteIncrementalConfig(dir_, port_, changes_keys);
  process_ = std::make_unique<DaemonProcess>(
      std::vector<std::string>{"--config", config_},
      std::vector<std::string>{
          "SEATWATCH_DSN=" + db.dsn(),
          "SEATWATCH_CHANGES_DSN=" + (changes_dsn.empty() ? db.changes_dsn() : changes_dsn)});
}

std::string IncrementalDaemon::Metrics() const { return HttpGet(port_, "/metrics").body; }

double IncrementalDaemon::Value(const std::string& series) const {
  return Sample(Metrics(), series);
}

bool IncrementalDaemon::Incremental(const std::string& text) const {
  for (const char* check : {"booking_reconciliation", "event_inventory"}) {
    if (Sample(text, std::string("seatwatch_check_mode{check=\"") + check +
                         "\",mode=\"incremental\"}") != 1) {
      return false;
    }
  }
  return true;
}

bool IncrementalDaemon::WaitIncremental(std::chrono::milliseconds timeout) const {
  return WaitFor([&] { return Incremental(Metrics()); }, timeout);
}

std::string IncrementalDaemon::ApiInvariants() const {
  return HttpGet(port_, "/api/invariants").body;
}

int IncrementalDaemon::ChangesBackendPid() const {
  std::string pid = AdminScalar(
      "SELECT pid FROM pg_stat_activity WHERE datname = '" + db_.name() +
      "' AND application_name = 'seatwatch-changes' AND backend_type = 'walsender' "
      "ORDER BY backend_start DESC LIMIT 1");
  return pid.empty() ? 0 : std::stoi(pid);
}

std::string IncrementalDaemon::ChangesSlot() const {
  int pid = ChangesBackendPid();
  if (pid == 0) return "";
  return AdminScalar("SELECT slot_name FROM pg_replication_slots WHERE active_pid = " +
                     std::to_string(pid));
}

std::string Violation::series() const {
  return "seatwatch_invariant_violations{invariant=\"" + invariant + "\",event_id=\"" +
         Str(event_id) + "\"}";
}

std::vector<Violation> SixViolations(const std::vector<int>& events) {
  if (events.size() != 6) throw std::invalid_argument("six events");
  std::vector<Violation> out(6);
  for (int i = 0; i < 6; ++i) {
    out[i].invariant = kInvariants[i];
    out[i].event_id = events[i];
  }
  auto where = [](int e, const std::string& seats) {
    return " WHERE event_id = " + Str(e) + " AND seat IN (" + seats + ")";
  };
  auto payment = [](const std::string& key, int e, const std::string& seat,
                    const std::string& fan) {
    return "INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status) "
           "VALUES ('" + key + "', " + Str(e) + ", '" + seat + "', '" + fan +
           "', 100, 'confirmed')";
  };
  int e = events[0];
  // An admin script sells two seats directly.
  out[0].count = 2;
  out[0].inject_sql = "UPDATE seats SET status = 'sold', holder = 'inj1'" + where(e, "'V1','V2'");
  out[0].repair_sql = "UPDATE seats SET status = 'free', holder = NULL" + where(e, "'V1','V2'");
  // A ticket (paid) for a seat still free.
  e = events[1];
  out[1].count = 1;
  out[1].inject_sql = "BEGIN; INSERT INTO tickets (event_id, seat, fan) VALUES (" + Str(e) +
                      ", 'V3', 'inj2'); " + payment("inj2-" + Str(e), e, "V3", "inj2") +
                      "; COMMIT";
  out[1].repair_sql = "BEGIN; DELETE FROM tickets" + where(e, "'V3'") +
                      "; DELETE FROM payments WHERE idempotency_key = 'inj2-" + Str(e) +
                      "'; COMMIT";
  // A payment confirmed though the confirm sold nothing.
  e = events[2];
  out[2].count = 1;
  out[2].inject_sql = payment("inj3-" + Str(e), e, "V4", "inj3");
  out[2].repair_sql = "DELETE FROM payments WHERE idempotency_key = 'inj3-" + Str(e) + "'";
  // A sold and ticketed seat whose payment falls back to started.
  e = events[3];
  out[3].count = 1;
  out[3].prepare_sql = CorrectSaleSql(e, "V5", "inj4", "inj4-" + Str(e));
  out[3].inject_sql =
      "UPDATE payments SET status = 'started' WHERE idempotency_key = 'inj4-" + Str(e) + "'";
  out[3].repair_sql =
      "UPDATE payments SET status = 'confirmed' WHERE idempotency_key = 'inj4-" + Str(e) + "'";
  // A retried checkout charged twice more: three confirmed, two extra.
  e = events[4];
  out[4].count = 2;
  out[4].prepare_sql = CorrectSaleSql(e, "V6", "inj5", "inj5-" + Str(e));
  out[4].inject_sql = "BEGIN; " + payment("inj5a-" + Str(e), e, "V6", "inj5") + "; " +
                      payment("inj5b-" + Str(e), e, "V6", "inj5") + "; COMMIT";
  out[4].repair_sql = "DELETE FROM payments WHERE idempotency_key IN ('inj5a-" + Str(e) +
                      "', 'inj5b-" + Str(e) + "')";
  // Four bought, and a fifth held for an hour: over the limit of four.
  e = events[5];
  out[5].count = 1;
  out[5].prepare_sql.clear();
  for (const char* seat : {"V7", "V8", "V9", "V10"}) {
    out[5].prepare_sql += CorrectSaleSql(e, seat, "inj6", std::string("inj6-") + seat + "-" +
                                                              Str(e)) + "; ";
  }
  out[5].inject_sql = "UPDATE seats SET status = 'held', holder = 'inj6', "
                      "hold_expires_at = now() + interval '1 hour'" + where(e, "'V11'");
  out[5].repair_sql = "UPDATE seats SET status = 'free', holder = NULL, hold_expires_at = NULL" +
                      where(e, "'V11'");
  return out;
}

bool AllInvariantsOk(const std::string& metrics_text, std::string* bad) {
  bool ok = true;
  for (const char* invariant : kInvariants) {
    double value =
        Sample(metrics_text, std::string("seatwatch_invariant_ok{invariant=\"") + invariant + "\"}");
    if (value != 1) {
      ok = false;
      if (bad) *bad += std::string(bad->empty() ? "" : ",") + invariant + "=" +
                       (std::isnan(value) ? "absent" : std::to_string(value));
    }
  }
  return ok;
}

BookingLoad::BookingLoad(const ScratchDatabase& db, int threads, int flows_per_thread,
                         std::uint32_t seed, int lapse_every)
    : db_(db), threads_(threads), flows_per_thread_(flows_per_thread), lapse_every_(lapse_every) {
  for (int t = 0; t < threads; ++t) {
    workers_.emplace_back([this, t, seed] { Run(t, seed + static_cast<std::uint32_t>(t)); });
  }
}

BookingLoad::~BookingLoad() { Stop(); }

void BookingLoad::Stop() {
  stop_ = true;
  for (auto& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
}

std::string BookingLoad::first_error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return first_error_;
}

void BookingLoad::Run(int thread, std::uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> event(1, kEvents);
  std::uniform_int_distribution<int> pause_ms(0, 15);
  try {
    auto connection = db_.Connect();
    auto exec = [&](const std::string& sql) {
      pqxx::nontransaction tx(*connection);
      return tx.exec(sql);
    };
    for (int i = 0; i < flows_per_thread_ && !stop_; ++i) {
      int e = event(random);
      std::string seat = "T" + Str(thread) + "_" + Str(i);
      std::string fan = "f" + Str(thread) + "_" + Str(i);
      std::string key = "k" + Str(thread) + "_" + Str(i);
      std::string where = " WHERE event_id = " + Str(e) + " AND seat = '" + seat + "'";
      bool lapse = lapse_every_ > 0 && i % lapse_every_ == lapse_every_ - 1;
      // Claim: the conditional UPDATE.
      exec("UPDATE seats SET status = 'held', holder = '" + fan + "', hold_expires_at = now() + " +
           (lapse ? "interval '1 second'" : "interval '10 minutes'") +
           ", version = version + 1" + where + " AND status = 'free'");
      std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(random)));
      // Checkout: the payment by idempotency key.
      exec("INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents) VALUES ('" +
           key + "', " + Str(e) + ", '" + seat + "', '" + fan +
           "', 8000) ON CONFLICT (idempotency_key) DO NOTHING");
      if (lapse) {  // abandoned: the hold lapses, the payment stays started
        ++lapsed_;
        continue;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(random)));
      // Confirm: sold + ticket + payment confirmed, one transaction, only
      // while the hold is still this fan's.
      exec("BEGIN; WITH sold AS (UPDATE seats SET status = 'sold', hold_expires_at = NULL, "
           "version = version + 1" + where + " AND status = 'held' AND holder = '" + fan +
           "' AND hold_expires_at > now() RETURNING event_id, seat, holder) "
           "INSERT INTO tickets (event_id, seat, fan) SELECT event_id, seat, holder FROM sold; "
           "UPDATE payments SET status = 'confirmed' WHERE idempotency_key = '" + key +
           "' AND EXISTS (SELECT 1 FROM tickets" + where + " AND fan = '" + fan + "'); COMMIT");
      ++flows_;
    }
  } catch (const std::exception& e) {
    ++errors_;
    std::lock_guard<std::mutex> lock(mutex_);
    if (first_error_.empty()) first_error_ = e.what();
  }
  ++finished_;
}

HangingCommit::HangingCommit(const ScratchDatabase& db, const std::string& sql) : db_(db) {
  connection_ = db.Connect();
  {
    pqxx::nontransaction tx(*connection_);
    tx.exec("SET synchronous_commit = on");
    pid_ = tx.exec1("SELECT pg_backend_pid()")[0].as<int>();
  }
  thread_ = std::thread([this, sql] {
    try {
      pqxx::work tx(*connection_);
      tx.exec(sql);
      xid_ = tx.exec1("SELECT pg_current_xact_id()::text")[0].as<std::uint64_t>();
      started_ = true;
      tx.commit();
      result_ = 1;
    } catch (const std::exception&) {
      started_ = true;
      result_ = -1;
    }
  });
  // The xid is known before COMMIT is sent.
  WaitFor([&] { return started_.load(); }, 30s);
}

HangingCommit::~HangingCommit() {
  if (thread_.joinable()) {
    if (result_ == 0) {
      // Still waiting for the standby (a failed test): cancel the wait so
      // that the thread ends (the commit stays committed locally).
      try {
        AdminScalar("SELECT pg_cancel_backend(" + Str(pid_) + ")");
      } catch (...) {
      }
    }
    thread_.join();
  }
}

bool HangingCommit::WaitHanging(std::chrono::milliseconds timeout) const {
  return WaitFor([&] {
    return AdminScalar("SELECT count(*) FROM pg_stat_activity WHERE pid = " + Str(pid_) +
                       " AND wait_event = 'SyncRep'") == "1";
  }, timeout);
}

bool HangingCommit::Join(std::chrono::milliseconds timeout) {
  bool done = WaitFor([&] { return result_ != 0; }, timeout);
  if (done && thread_.joinable()) thread_.join();
  return result_ == 1;
}

}  // namespace seatwatch::testing
