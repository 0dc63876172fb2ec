#include "support/standby.h"

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include <pqxx/connection>
#include <pqxx/nontransaction>

#include "support/scratch_db.h"
#include "support/test_env.h"

namespace seatwatch::testing {

namespace {

std::string Trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// One shell word: 'text', with each ' as '\''.
std::string ShellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string FirstValue(const std::string& dsn, const std::string& sql) {
  pqxx::connection connection(dsn);
  pqxx::nontransaction tx(connection);
  auto result = tx.exec(sql);
  if (result.empty() || result[0][0].is_null()) return "";
  return result[0][0].c_str();
}

}  // namespace

ScratchStandby::ScratchStandby(const std::string& server_options)
    : script_(SourceDir() + "/scripts/pg-scratch"), dir_(MakeTempDir("sw-standby")) {
  std::string command = script_ + " standby " + ShellQuote(dir_) + " " +
                        ShellQuote(ScratchPgDir());
  if (!server_options.empty()) command = "PG_SCRATCH_OPTS=" + ShellQuote(server_options) + " " +
                                         command;
  std::string output;
  int status = RunCommand(command, &output);
  if (status != 0) {
    std::string ignored;
    RunCommand(script_ + " destroy " + ShellQuote(dir_), &ignored);
    throw std::runtime_error("pg-scratch standby failed (exit " + std::to_string(status) +
                             "):\n" + output);
  }
  port_ = std::stoi(Trim(ReadFile(dir_ + "/port")));
}

ScratchStandby::~ScratchStandby() {
  std::string output;
  RunCommand(script_ + " destroy " + ShellQuote(dir_), &output);
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string ScratchStandby::Dsn(const std::string& dbname, const std::string& user) const {
  return "host=" + dir_ + "/sock port=" + std::to_string(port_) + " user=" + user +
         " dbname=" + dbname;
}

void ScratchStandby::Exec(const std::string& dbname, const std::string& sql) const {
  pqxx::connection connection(Dsn(dbname));
  pqxx::nontransaction tx(connection);
  tx.exec(sql);
}

std::string ScratchStandby::Scalar(const std::string& dbname, const std::string& sql) const {
  return FirstValue(Dsn(dbname), sql);
}

void ScratchStandby::Promote() {
  std::string output;
  int status = RunCommand(script_ + " promote " + ShellQuote(dir_), &output);
  if (status != 0) {
    throw std::runtime_error("pg-scratch promote failed (exit " + std::to_string(status) +
                             "):\n" + output);
  }
  if (Scalar("postgres", "SELECT pg_is_in_recovery()") != "f") {
    throw std::runtime_error("pg-scratch promote returned while the server is in recovery");
  }
}

void ScratchStandby::WaitReplayed(double timeout_seconds) const {
  std::string lsn = FirstValue(ScratchDsn("postgres"), "SELECT pg_current_wal_lsn()::text");
  pqxx::connection connection(Dsn("postgres"));
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(timeout_seconds));
  std::string replayed;
  while (std::chrono::steady_clock::now() < deadline) {
    pqxx::nontransaction tx(connection);
    auto row = tx.exec_params1(
        "SELECT coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false), "
        "coalesce(pg_last_wal_replay_lsn()::text, 'none')",
        lsn);
    if (row[0].as<bool>()) return;
    replayed = row[1].c_str();
    tx.commit();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("the standby has not replayed " + lsn + " (at " + replayed +
                           ") after " + std::to_string(timeout_seconds) + " s");
}

std::string ScratchStandby::Log() const {
  try {
    return ReadFile(dir_ + "/postgres.log");
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace seatwatch::testing
