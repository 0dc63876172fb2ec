#include "metrics/snapshot_builder.h"

#include <string>

#include "metrics/family.h"
#include "metrics/json_cap.h"
#include "metrics/lifecycle_families.h"
#include "metrics/provenance_json.h"
#include "util/json_writer.h"

namespace seatwatch::metrics {

namespace {

constexpr const char* kFromLastPoll = " Values come from the last poll, never from the scrape.";

void AddSelfFamilies(const PollState& state, std::vector<prometheus::MetricFamily>& out) {
  out.push_back(SingleGauge("seatwatch_up",
                            "1 if the last poll of each lane with checks (the locks lane, the "
                            "others) reached the database, 0 if one did not.",
                            state.database_up ? 1 : 0));
  out.push_back(SingleGauge("seatwatch_last_poll_timestamp_seconds",
                            "Unix time of the last poll (whether or not it reached the database).",
                            state.last_poll_unix));
  out.push_back(SingleGauge("seatwatch_poll_interval_seconds",
                            "The configured [poll] interval: the default for checks without one.",
                            state.poll_interval_seconds));
  auto build = GaugeFamily("seatwatch_build_info", "Always 1; the version label says which build.");
  AddGauge(build, {{"version", state.version}}, 1);
  out.push_back(std::move(build));
}

// The server each lane read on its last poll (PollState::servers): a
// lane that could not read its server's facts has none of these series.
void AddServerFamilies(const PollState& state, std::vector<prometheus::MetricFamily>& out) {
  auto recovery = GaugeFamily("seatwatch_database_in_recovery",
                              "1 while the lane reads a standby (pg_is_in_recovery()), 0 on a "
                              "primary.");
  auto lag = GaugeFamily("seatwatch_replica_lag_seconds",
                         "How late what the lane reads may be, in seconds: 0 on a primary and on "
                         "a standby that has replayed all it received, else the age of the last "
                         "replayed transaction.");
  auto timeline = GaugeFamily("seatwatch_database_timeline",
                              "The timeline of the server the lane reads (0: unknown); a "
                              "promotion raises it.");
  for (const auto& server : state.servers) {
    Labels labels{{"lane", server.lane}};
    AddGauge(recovery, labels, server.facts.in_recovery ? 1 : 0);
    AddGauge(lag, labels, server.facts.replica_lag_seconds);
    AddGauge(timeline, labels, server.facts.timeline);
  }
  auto failovers = CounterFamily("seatwatch_database_failovers_total",
                                 "Times a lane found the database on another server than before "
                                 "(another system identifier, or a higher timeline), once per "
                                 "change.");
  AddCounter(failovers, {}, static_cast<double>(state.failovers_total));
  for (auto* family : {&recovery, &lag, &timeline, &failovers}) out.push_back(std::move(*family));
}

void AddCheckFamilies(const PollState& state, std::vector<prometheus::MetricFamily>& out) {
  auto success = GaugeFamily("seatwatch_check_success",
                             "1 if the check's last run succeeded, 0 if it failed.");
  auto duration = GaugeFamily("seatwatch_check_duration_seconds",
                              "Wall time of the check's last run, in seconds.");
  auto errors = CounterFamily("seatwatch_check_errors_total",
                              "Failed check runs by reason: timeout (statement_timeout), "
                              "lock_timeout, connection, sql, too_many_rows (over max_rows), "
                              "duplicate_series (two rows, one label set), bad_value (not a "
                              "number, or not a count), recovery_conflict (a standby's replay "
                              "cancelled it).");
  auto last_success = GaugeFamily("seatwatch_check_last_success_timestamp_seconds",
                                  "Unix time of the check's last successful run (0: never).");
  auto interval = GaugeFamily("seatwatch_check_interval_seconds",
                              "The check's configured interval, in seconds.");
  for (const auto& check : state.checks) {
    Labels labels{{"check", check.name}};
    AddGauge(interval, labels, check.interval_seconds);
    AddGauge(last_success, labels, check.last_success_unix);
    for (const auto& [reason, count] : check.errors) {
      AddCounter(errors, {{"check", check.name}, {"reason", reason}},
                 static_cast<double>(count));
    }
    if (!check.has_run) continue;
    AddGauge(success, labels, check.success ? 1 : 0);
    AddGauge(duration, labels, check.duration_seconds);
  }
  for (auto* family : {&success, &duration, &errors, &last_success, &interval}) {
    out.push_back(std::move(*family));
  }
}

void AddInvariantFamilies(const PollState& state, std::vector<prometheus::MetricFamily>& out) {
  auto ok = GaugeFamily("seatwatch_invariant_ok",
                        std::string("1 if the invariant holds, 0 if violated; absent while its "
                                    "check fails.") +
                            kFromLastPoll);
  auto violations = GaugeFamily(
      "seatwatch_invariant_violations",
      std::string("Offending rows per invariant and key, one series per row the query "
                  "returned.") +
          kFromLastPoll);
  auto since = GaugeFamily("seatwatch_invariant_status_since_timestamp_seconds",
                           "Unix time at which the invariant's current OK/violated status began, "
                           "as seen by this process.");
  auto info = GaugeFamily("seatwatch_invariant_info",
                          "1 for each configured invariant: its check and its help, as the "
                          "config says them (what an alert names), whether the check runs or "
                          "fails.");
  for (const auto& check : state.checks) {
    for (const auto& name : check.invariants) {
      auto help = check.help.find(name);
      AddGauge(info, {{"check", check.name}, {"invariant", name},
                      {"help", help == check.help.end() ? "" : help->second}},
               1);
    }
  }
  for (const auto& check : state.checks) {
    if (!check.output) continue;
    for (const auto& invariant : check.output->invariants) {
      AddGauge(ok, {{"invariant", invariant.name}}, invariant.ok() ? 1 : 0);
      auto history = state.history.find(invariant.name);
      if (history != state.history.end()) {
        AddGauge(since, {{"invariant", invariant.name}}, history->second.since_unix);
      }
      for (const auto& violation : invariant.violations) {
        Labels labels{{"invariant", invariant.name}};
        labels.insert(labels.end(), violation.labels.begin(), violation.labels.end());
        AddGauge(violations, std::move(labels), violation.value);
      }
    }
  }
  out.push_back(std::move(ok));
  out.push_back(std::move(violations));
  out.push_back(std::move(since));
  out.push_back(std::move(info));
}

// Incremental checks only (CheckStatus::incremental): their mode, what the
// last cycle rechecked and why they read everything again.
void AddIncrementalFamilies(const PollState& state, std::vector<prometheus::MetricFamily>& out) {
  auto dirty = GaugeFamily("seatwatch_dirty_keys",
                           "Keys the incremental check rechecked in its last run (0 after a full "
                           "pass or a cycle in which nothing changed).");
  auto passes = CounterFamily("seatwatch_full_passes_total",
                              "Full passes of an incremental check by reason: startup, backstop "
                              "([changes] full_pass_interval), resync (a new slot), unmappable (a "
                              "change without its key), feed_down, drain_cost, coverage (the "
                              "publication's coverage of the watched tables changed).");
  auto mismatches = CounterFamily(
      "seatwatch_incremental_mismatches_total",
      "Keys whose incremental state differed from a backstop full pass with nothing the change "
      "feed handed over to explain it, by invariant (empty for a [[metric]] entry): a seatwatch "
      "defect or a scoped_sql that misses rows. The full pass corrected each.");
  auto held = GaugeFamily(
      "seatwatch_provenance_commits",
      "Commits the incremental check holds as provenance: those that changed keys not found "
      "clean since (a ring per key, a cap per check).");
  auto evicted = CounterFamily(
      "seatwatch_provenance_evicted_total",
      "Commits the incremental check's provenance cap evicted before their key was found clean: "
      "a violation then names fewer of the commits before it.");
  auto followed = GaugeFamily(
      "seatwatch_followed_keys",
      "Keys of the declared incremental check whose rows it follows one by one: a recheck of "
      "such a key reads only its rows that changed (hot keys, read whole five times within a minute).");
  auto followed_rows = GaugeFamily(
      "seatwatch_followed_rows",
      "Rows the declared incremental check holds for the keys it follows (each row's part of "
      "the check's counts and hashes).");
  auto rechecks = CounterFamily(
      "seatwatch_key_rechecks_total",
      "Keys the incremental check rechecked, by how it read them: rows (only the rows that "
      "changed, for a followed key in balance) or whole (the key's rows all read by its scoped "
      "query).");
  auto mode = GaugeFamily("seatwatch_check_mode",
                          "1 for the incremental check's current mode: incremental (rechecks "
                          "the keys the change feed names) or full (reads everything).");
  for (const auto& check : state.checks) {
    if (!check.incremental) continue;
    const IncrementalStatus& status = *check.incremental;
    AddGauge(dirty, {{"check", check.name}}, static_cast<double>(status.dirty_keys));
    for (const auto& [reason, count] : status.full_passes) {
      AddCounter(passes, {{"check", check.name}, {"reason", reason}}, static_cast<double>(count));
    }
    for (const auto& [invariant, count] : status.mismatches) {
      AddCounter(mismatches, {{"check", check.name}, {"invariant", invariant}},
                 static_cast<double>(count));
    }
    if (status.provenance) {
      AddGauge(held, {{"check", check.name}}, static_cast<double>(status.provenance_commits));
      AddCounter(evicted, {{"check", check.name}}, static_cast<double>(status.provenance_evicted));
    }
    if (status.row_ledger) {
      AddGauge(followed, {{"check", check.name}}, static_cast<double>(status.followed_keys));
      AddGauge(followed_rows, {{"check", check.name}}, static_cast<double>(status.followed_rows));
      AddCounter(rechecks, {{"check", check.name}, {"read", "rows"}},
                 static_cast<double>(status.rechecked_by_rows));
      AddCounter(rechecks, {{"check", check.name}, {"read", "whole"}},
                 static_cast<double>(status.rechecked_whole));
    }
    for (const char* name : {"incremental", "full"}) {
      AddGauge(mode, {{"check", check.name}, {"mode", name}}, status.mode == name ? 1 : 0);
    }
  }
  for (auto* family : {&dirty, &passes, &mismatches, &held, &evicted, &followed, &followed_rows,
                       &rechecks, &mode}) {
    out.push_back(std::move(*family));
  }
}

void WriteDetail(util::JsonWriter& json, const DetailRows& detail) {
  json.BeginObject();
  json.Key("columns").BeginArray();
  for (const auto& column : detail.columns) json.String(column);
  json.EndArray();
  json.Key("rows").BeginArray();
  for (const auto& row : detail.rows) {
    json.BeginObject();
    for (size_t i = 0; i < row.size() && i < detail.columns.size(); ++i) {
      json.Key(detail.columns[i]).OptionalString(row[i]);
    }
    json.EndObject();
  }
  json.EndArray();
  if (!detail.error.empty()) json.Key("error").String(detail.error);
  if (detail.truncated) json.Key("truncated").Bool(true);
  json.EndObject();
}

// /api/invariants stays within kApiMaxBytes and still names every
// invariant: violation rows and details are written only while the
// document is below this, leaving room for the other invariants' status.
constexpr size_t kInvariantsRowsBudget = kApiMaxBytes - (512 << 10);

}  // namespace

std::vector<prometheus::MetricFamily> BuildFamilies(const PollState& state) {
  std::vector<prometheus::MetricFamily> families;
  AddSelfFamilies(state, families);
  AddServerFamilies(state, families);
  AddCheckFamilies(state, families);
  AddInvariantFamilies(state, families);
  AddLifecycleFamilies(state, families);
  AddIncrementalFamilies(state, families);
  return families;
}

std::string InvariantsJson(const PollState& state) {
  util::JsonWriter json;
  json.BeginObject();
  json.Key("database_up").Bool(state.database_up);
  json.Key("servers").BeginArray();
  for (const auto& server : state.servers) {
    json.BeginObject();
    json.Key("lane").String(server.lane);
    json.Key("in_recovery").Bool(server.facts.in_recovery);
    json.Key("replica_lag_seconds").Number(server.facts.replica_lag_seconds);
    json.Key("system_identifier").String(server.facts.system_identifier);
    json.Key("timeline").Int(server.facts.timeline);
    json.EndObject();
  }
  json.EndArray();
  json.Key("failovers_total").Int(static_cast<std::int64_t>(state.failovers_total));
  json.Key("last_poll_timestamp_seconds").Number(state.last_poll_unix);
  json.Key("invariants").BeginArray();
  bool truncated = false;
  for (const auto& check : state.checks) {
    if (check.invariants.empty()) continue;
    for (const auto& name : check.invariants) {
      const InvariantResult* result = FindInvariant(check, name);
      json.BeginObject();
      json.Key("name").String(name);
      json.Key("check").String(check.name);
      if (check.incremental) {
        json.Key("mode").String(check.incremental->mode);
        if (!check.incremental->mode_reason.empty()) {
          json.Key("mode_reason").String(check.incremental->mode_reason);
        }
        json.Key("last_full_pass_unix").Number(check.incremental->last_full_pass_unix);
      }
      if (!result) {
        json.Key("status").String("unknown");
        json.Key("reason").String(check.has_run ? check.last_error : "not run yet");
        json.EndObject();
        continue;
      }
      json.Key("status").String(result->ok() ? "ok" : "violated");
      if (!result->help.empty()) json.Key("help").String(result->help);
      auto history = state.history.find(name);
      if (history != state.history.end()) {
        json.Key("since_timestamp_seconds").Number(history->second.since_unix);
      }
      json.Key("violations_total").Number(result->total());
      json.Key("violations").BeginArray();
      size_t written = 0;
      for (const auto& violation : result->violations) {
        if (json.str().size() > kInvariantsRowsBudget) break;
        ++written;
        json.BeginObject();
        json.Key("labels").BeginObject();
        for (const auto& label : violation.labels) json.Key(label.name).String(label.value);
        json.EndObject();
        json.Key("value").Number(violation.value);
        const auto* open = FindOpen(state, check.name, name, violation.labels);
        if (open) json.Key("since_timestamp_seconds").Number(open->since_unix);
        if (open && open->first_violated_by && !open->first_violated_by->commits.empty()) {
          json.Key("first_violated_by");
          WriteProvenance(json, *open->first_violated_by);
        } else if (open && open->provenance_dropped) {
          json.Key("provenance").String(
              "not kept: " + std::to_string(ViolationLifecycle::kMaxWithProvenance) +
              " keys violated now hold theirs");
        } else if (check.incremental && check.incremental->provenance) {
          // Full-pass checks never have any: their entries say nothing.
          json.Key("provenance").String(
              NoProvenanceReason(check.incremental->mode == "incremental"));
        }
        json.EndObject();
      }
      json.EndArray();
      if (written < result->violations.size()) {
        json.Key("violations_omitted")
            .Int(static_cast<std::int64_t>(result->violations.size() - written));
        truncated = true;
      }
      if (result->detail && json.str().size() > kInvariantsRowsBudget) {
        json.Key("detail_omitted").Bool(true);
        truncated = true;
      } else if (result->detail) {
        json.Key("detail");
        WriteDetail(json, *result->detail);
      }
      json.EndObject();
    }
  }
  json.EndArray();
  // Keys that healed lately, newest first; a restart starts afresh.
  json.Key("lifecycle_since_timestamp_seconds").Number(LifecycleStart(state));
  json.Key("healed").BeginArray();
  for (const auto& healed : RecentlyHealed(state)) {
    if (json.str().size() > kInvariantsRowsBudget) {
      truncated = true;
      break;
    }
    json.BeginObject();
    json.Key("invariant").String(healed.invariant);
    json.Key("check").String(healed.check);
    json.Key("labels").BeginObject();
    for (const auto& label : healed.labels) json.Key(label.name).String(label.value);
    json.EndObject();
    json.Key("since_timestamp_seconds").Number(healed.since_unix);
    json.Key("healed_timestamp_seconds").Number(healed.healed_unix);
    json.Key("lasted_seconds").Number(healed.healed_unix - healed.since_unix);
    if (healed.first_violated_by && !healed.first_violated_by->commits.empty()) {
      json.Key("first_violated_by");
      WriteProvenance(json, *healed.first_violated_by);
    }
    json.EndObject();
  }
  json.EndArray();
  if (truncated) json.Key("truncated").Bool(true);
  json.EndObject();
  // Names, helps and errors are not budgeted: the cap itself is the backstop.
  return CapJson(json.str());
}

Snapshot BuildSnapshot(const PollState& state) {
  return BuildSnapshot(std::make_shared<const PollState>(state));
}

Snapshot BuildSnapshot(std::shared_ptr<const PollState> shared) {
  const PollState& state = *shared;
  Snapshot snapshot;
  snapshot.metrics_parts.push_back(
      std::make_shared<const std::string>(RenderText(BuildFamilies(state))));
  for (const auto& check : state.checks) {
    if (!check.output || !check.rendered) continue;
    for (const auto& part : check.rendered->parts) snapshot.metrics_parts.push_back(part);
  }
  if (!state.changes_metrics.empty()) {
    snapshot.metrics_parts.push_back(std::make_shared<const std::string>(state.changes_metrics));
  }
  snapshot.invariants_json = InvariantsJson(state);
  for (const auto& check : state.checks) {
    if (!check.output) continue;
    for (const auto& [name, document] : check.output->documents) {
      snapshot.documents[name] = CapJson(document);
    }
  }
  snapshot.database_up = state.database_up;
  snapshot.last_poll_unix = state.last_poll_unix;
  snapshot.last_successful_poll_unix = state.last_successful_poll_unix;
  snapshot.poll_interval_seconds = state.poll_interval_seconds;
  snapshot.state = std::move(shared);
  return snapshot;
}

}  // namespace seatwatch::metrics
