#include "checks/holds_check.h"

#include <any>
#include <stdexcept>

#include "checks/query_entry.h"
#include "metrics/family.h"
#include "metrics/row_mapping.h"

namespace seatwatch::checks {

namespace {

constexpr const char* kFromLastPoll = " Judged by the database's now(); from the last poll.";

double Cell(const db::Rows& rows, const std::string& column) {
  int index = rows.ColumnIndex(column);
  if (index < 0) throw metrics::MissingColumn("sql", column, rows.columns);
  const auto& cell = rows.values.front()[static_cast<size_t>(index)];
  if (!cell) return 0;
  try {
    return metrics::ParseNumber(*cell);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error("column \"" + column + "\": " + e.what());
  }
}

}  // namespace

HoldsCounts HoldsFromRows(const db::Rows& rows) {
  for (const auto& column : HoldsColumns()) {
    if (rows.ColumnIndex(column) < 0) throw metrics::MissingColumn("sql", column, rows.columns);
  }
  if (rows.values.size() != 1) {
    throw std::runtime_error("the query must return exactly one row (it returned " +
                             std::to_string(rows.values.size()) + ")");
  }
  HoldsCounts counts;
  counts.active = Cell(rows, "holds_active");
  counts.expired = Cell(rows, "holds_expired");
  counts.expired_oldest_seconds = Cell(rows, "holds_expired_oldest_seconds");
  counts.payments_lapsed = Cell(rows, "payments_lapsed");
  return counts;
}

std::vector<prometheus::MetricFamily> HoldsFamilies(const HoldsCounts& counts) {
  std::vector<prometheus::MetricFamily> families;
  families.push_back(metrics::SingleGauge(
      "seatwatch_holds_active",
      std::string("Seats held with an unexpired hold (hold_expires_at > now()).") + kFromLastPoll,
      counts.active));
  families.push_back(metrics::SingleGauge(
      "seatwatch_holds_expired",
      std::string("Seats still marked held whose hold has expired: the cleanup backlog. They are "
                  "free for sale already.") +
          kFromLastPoll,
      counts.expired));
  families.push_back(metrics::SingleGauge(
      "seatwatch_holds_expired_oldest_seconds",
      std::string("How long ago the oldest expired, not yet freed hold expired, in seconds (0 "
                  "when there is none).") +
          kFromLastPoll,
      counts.expired_oldest_seconds));
  families.push_back(metrics::SingleGauge(
      "seatwatch_payments_lapsed",
      std::string("Payments still 'started' whose seat is no longer held by that fan with an "
                  "unexpired hold: refunds owed if they are charged.") +
          kFromLastPoll,
      counts.payments_lapsed));
  return families;
}

const HoldsCounts* HoldsOf(const metrics::CheckOutput& output) {
  return std::any_cast<HoldsCounts>(&output.facts);
}

HoldsCheck::HoldsCheck(config::HoldsConfig config, Millis interval)
    : config_(std::move(config)), interval_(interval) {}

metrics::CheckOutput HoldsCheck::Run(CheckContext& context) {
  auto rows = context.queries.Run(context.tx, config_.sql, {});
  HoldsCounts counts;
  try {
    counts = HoldsFromRows(*rows);
  } catch (const std::runtime_error& e) {
    // MissingColumn included: the file does not fit [holds], a config error.
    throw EntryMismatch(config_.where.Describe("holds.sql") + ": " + config_.sql_path + ": " +
                        e.what());
  }
  metrics::CheckOutput output;
  output.families = HoldsFamilies(counts);
  output.facts = counts;
  return output;
}

}  // namespace seatwatch::checks
