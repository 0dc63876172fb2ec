// [database], [checks], [changes] and [poll]: where each lane connects and
// how often it polls.
#include "config/names.h"
#include "config/sections.h"
#include "config/validate.h"
#include "util/duration.h"

namespace seatwatch::config {

void ParseDatabase(TableReader& reader, DatabaseConfig& db) {
  Location dsn_where = reader.TableWhere();
  if (const toml::node* node = reader.Find("dsn")) dsn_where = reader.Where(*node);
  if (auto v = reader.String("dsn")) db.dsn = *v;
  if (const toml::node* node = reader.Find("application_name")) {
    db.application_name = *reader.LimitedString("application_name");
    if (HasControlCharacter(db.application_name)) {
      Fail(reader.Where(*node), "database.application_name",
           "must not contain control characters");
    }
  }
  if (const toml::node* node = reader.Find("connect_timeout")) {
    // libpq reads an int of whole seconds and takes anything below 2 as 2.
    db.connect_timeout = *reader.AnyDuration("connect_timeout");
    if (db.connect_timeout.count() % 1000 != 0) {
      Fail(reader.Where(*node), "database.connect_timeout",
           "must be whole seconds (libpq's connect_timeout is an integer number of seconds)");
    }
    const KeySpec& spec = reader.Spec("connect_timeout");
    if (db.connect_timeout < spec.MinDuration() || db.connect_timeout > spec.MaxDuration()) {
      Fail(reader.Where(*node), "database.connect_timeout",
           "must be at least " + util::FormatDuration(spec.MinDuration()) + " and at most " +
               util::FormatDuration(spec.MaxDuration()) + " (got " +
               util::FormatDuration(db.connect_timeout) + "; libpq takes anything below " +
               util::FormatDuration(spec.MinDuration()) + " as " +
               util::FormatDuration(spec.MinDuration()) + ")");
    }
  }
  if (auto v = reader.Duration("statement_timeout")) db.statement_timeout = *v;
  if (auto v = reader.Duration("lock_timeout")) db.lock_timeout = *v;
  if (auto v = reader.Duration("reconnect_max_backoff")) db.reconnect_max_backoff = *v;
  reader.RejectUnknownKeys();
  RequireUsableDsn(db, dsn_where);
}

// [checks]: where the checks lane reads (a standby may serve it).
void ParseChecks(TableReader& reader, Config& config) {
  config.checks.where = reader.TableWhere();
  if (const toml::node* node = reader.Find("dsn")) {
    config.checks.dsn = *reader.String("dsn");
    RequireUsableChecksDsn(config, reader.Where(*node));
  }
  reader.RejectUnknownKeys();
}

void ParseChanges(TableReader& reader, Config& config) {
  ChangesConfig& changes = config.changes;
  changes.where = reader.TableWhere();
  if (auto v = reader.Bool("enabled")) changes.enabled = *v;
  // Both end up in names PostgreSQL keeps at most 63 bytes of, with only
  // [a-z0-9_] allowed in a slot name.
  for (const char* key : {"publication", "slot_prefix"}) {
    const toml::node* node = reader.Find(key);
    if (!node) continue;
    std::string value = *reader.LimitedString(key);
    if (!IsIdentifier(value)) {
      Fail(reader.Where(*node), reader.Qualified(key),
           Printable(value) + " must match [a-z_][a-z0-9_]*");
    }
    (std::string(key) == "publication" ? changes.publication : changes.slot_prefix) = value;
  }
  if (auto v = reader.Duration("interval")) changes.interval = *v;
  if (auto v = reader.Duration("full_pass_interval")) changes.full_pass_interval = *v;
  if (auto v = reader.Duration("recheck_time_per_minute")) changes.recheck_time_per_minute = *v;
  if (changes.full_pass_interval < changes.interval) {
    const toml::node* node = reader.Find("full_pass_interval");
    Fail(node ? reader.Where(*node) : reader.Where(*reader.Find("interval")),
         "changes.full_pass_interval",
         "must be at least changes.interval (" + util::FormatDuration(changes.interval) +
             "; got " + util::FormatDuration(changes.full_pass_interval) + ")");
  }
  if (auto v = reader.Duration("statement_timeout")) changes.statement_timeout = *v;
  if (auto v = reader.Duration("create_timeout")) changes.create_timeout = *v;
  if (auto v = reader.Integer("max_changes")) changes.max_changes = static_cast<int>(*v);
  if (const toml::node* node = reader.Find("dsn")) {
    changes.dsn = *reader.String("dsn");
    RequireUsableChangesDsn(config, reader.Where(*node));
  }
  reader.RejectUnknownKeys();
}

void ParsePoll(TableReader& reader, PollConfig& poll) {
  if (auto v = reader.Duration("interval")) poll.interval = *v;
  reader.RejectUnknownKeys();
}

}  // namespace seatwatch::config
