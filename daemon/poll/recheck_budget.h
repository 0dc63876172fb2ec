#pragma once

#include <chrono>
#include <string>

#include "config/config.h"
#include "poll/scheduled_check.h"

namespace seatwatch::poll {

// How much of the database the incremental checks' rechecks may take:
// [changes] recheck_time_per_minute of their time in any minute. A recheck
// reads each changed key whole (an event's seats, tickets and payments), so
// its cost follows how big the hot keys are, not how much changed: a
// stadium's on-sale at `interval = "200ms"` could keep the checks' session
// busy most of the time. After a cycle whose rechecks took D seconds of
// the database (wall time waiting on the checks lane's session: BEGIN and
// its settings, each statement until its rows were read, COMMIT; not
// seatwatch's own work between them, which costs the server nothing but a
// session idle in its transaction), the next cycle starts no sooner than
//     D * 60 s / recheck_time_per_minute
// after this one started, and never sooner than [changes] interval: so in
// any minute the rechecks take at most the budget, plus the one cycle at its
// edge. Never later than [poll] interval either, when a full pass would have
// run in full-pass mode: holding back pays only while the same keys change
// again and again (a hot event read once for many changes); keys that are
// each written once cost the same read together or apart, and there each
// hold-back would make the next cycle dearer and the next hold-back longer,
// without end. Past that bound the rechecks cost what the writes make them
// cost. Full passes are not rechecks: they follow their own schedule (a
// backstop, a resync) and are not counted. The price is detection: a held
// back cycle sees a violation later, which the recheck interval gauge shows.
// Owned by the checks lane's poller thread.
class RecheckBudget {
 public:
  explicit RecheckBudget(const config::Config& config) { Configure(config); }
  void Configure(const config::Config& config);

  // A cycle that started at `start` and whose rechecks took
  // `recheck_seconds`; returns when the next may start.
  Clock::time_point Record(Clock::time_point start, double recheck_seconds);

  // What Record() made of its last cycle with rechecks: from its start to
  // the next one allowed, in seconds ([changes] interval before any).
  double interval_seconds() const { return interval_seconds_; }
  double recheck_seconds_total() const { return recheck_seconds_total_; }

  // seatwatch_changes_recheck_seconds_total and
  // seatwatch_changes_recheck_interval_seconds, in text format.
  std::string RenderMetrics() const;

 private:
  double interval_ = 1;           // [changes] interval, seconds
  double longest_ = 10;           // [poll] interval, seconds
  double seconds_per_second_ = 0;  // recheck time allowed per second of wall time
  double interval_seconds_ = 0;
  double recheck_seconds_total_ = 0;
};

// Whether a run of an incremental check, whose status was `before` and is
// now `after`, was a recheck of dirty keys: it was seeded (mode
// "incremental") and no full pass was counted.
bool WasRecheck(const metrics::IncrementalStatus& before, const metrics::IncrementalStatus& after);

}  // namespace seatwatch::poll
