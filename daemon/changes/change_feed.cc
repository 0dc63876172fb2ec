#include "changes/change_feed.h"

#include <set>
#include <stdexcept>

#include <pqxx/except>

#include "changes/change_decoder.h"
#include "changes/coverage_reader.h"
#include "changes/feed_options.h"
#include "util/log.h"

namespace seatwatch::changes {

namespace {

double SecondsSince(ChangeFeed::Clock::time_point start) {
  return std::chrono::duration<double>(ChangeFeed::Clock::now() - start).count();
}

// The slot itself is gone, not just a statement failed: its backend was
// terminated (pg_terminate_backend, max_slot_wal_keep_size invalidation,
// a server restart) or the slot no longer exists.
bool SlotGone(const std::exception& error) {
  if (dynamic_cast<const pqxx::broken_connection*>(&error)) return true;
  if (dynamic_cast<const ReplicationStreamError*>(&error)) return true;
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&error)) {
    const std::string& state = sql->sqlstate();
    // admin_shutdown, crash_shutdown, cannot_connect_now; undefined_object
    // (the slot does not exist); object_not_in_prerequisite_state (the slot
    // was invalidated: "can no longer get changes from replication slot").
    return state == "57P01" || state == "57P02" || state == "57P03" || state == "42704" ||
           state == "55000";
  }
  return false;
}

}  // namespace

ChangeFeed::ChangeFeed(ChangeFeedOptions options)
    : options_(std::move(options)),
      session_(options_.slot),
      create_backoff_(options_.slot.reconnect_max_backoff) {}

ChangeFeed::~ChangeFeed() = default;

ChangeBatch ChangeFeed::Drain() {
  if (aborted_) return ChangeBatch{};
  // A slot found lost is replaced at once, once: its loss says nothing
  // against a new one (a statement that failed on the slot might fail
  // again, so after an error the next cycle tries).
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!EnsureSlot()) break;
    ChangeBatch batch;
    Outcome outcome = DrainSlot(batch);
    if (outcome == Outcome::kDrained) return batch;
    if (outcome == Outcome::kFailed) break;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.up = false;
  ChangeBatch down;
  down.coverage_lost = coverage_lost_;
  return down;
}

ChangeFeed::Outcome ChangeFeed::DrainSlot(ChangeBatch& batch) {
  auto start = Clock::now();
  try {
    // The position first: its flush LSN is what this drain waits for, so a
    // commit visible before the drain comes in it.
    SlotPosition position = session_.Position();
    sightings_.NoteAll(position.sightings);
    if (position.lost) {
      Lose(ResyncReason::kSlotLost, "the slot is gone or invalidated (wal_status " +
                                        (position.wal_status.empty() ? std::string("none")
                                                                     : position.wal_status) +
                                        ")");
      return Outcome::kLost;
    }
    std::vector<SlotMessage> messages = session_.Drain(position.flush_lsn);
    for (const auto& message : messages) decoder_->Feed(message.data);
    if (!decoder_->coverage_change().empty()) {
      Lose(ResyncReason::kCoverage, decoder_->coverage_change());
      return Outcome::kLost;
    }
    batch.transactions = decoder_->TakeCommitted();
    double seconds = SecondsSince(start);
    sightings_.Attach(batch.transactions);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.drain_duration_seconds = seconds;
    }
    // After the drain: a publication change made before it is seen now, with
    // whatever this drain decoded under it.
    if (std::string changed = CoverageChange(); !changed.empty()) {
      Lose(ResyncReason::kCoverage, changed);
      return Outcome::kLost;
    }
    std::uint64_t decoded = decoder_->decoded_changes();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.up = true;
      stats_.lag_bytes = position.lag_bytes;
      stats_.decoded_total += decoded - decoded_before_;
    }
    decoded_before_ = decoded;
    if (!decoder_->unmappable().empty()) {
      batch.unmappable = decoder_->unmappable();
      decoder_->ClearUnmappable();
      log::Info("change feed: a change that cannot be mapped to keys forces a full pass",
                {{"change", batch.unmappable}, {"slot", session_.slot_name()}});
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.CountResync(ResyncReason::kUnmappable);
    }
    batch.feed_up = true;
    batch.generation = generation_;
    batch.creation_xids = creation_xids_;
    batch.complete_through_lsn = session_.complete_through();
    // What the drain cost the database: its statements, not the wait for the
    // stream (the walsender decodes each record once, whatever the drains).
    double cost = seconds - session_.waited_seconds();
    if (drain_cost_.Dear(cost)) {
      // The feed's own statements cost more than a full pass: a new slot and
      // a full pass cost less than going on.
      Lose(ResyncReason::kDrainCost,
           "drains took " + std::to_string(cost) + "s, more than a full pass (" +
               std::to_string(drain_cost_.full_pass_seconds()) + "s), " +
               std::to_string(DrainCostPolicy::kConsecutive) + " times in a row");
    }
    return Outcome::kDrained;
  } catch (const std::exception& e) {
    bool gone = SlotGone(e) || !session_.has_slot();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.drain_duration_seconds = SecondsSince(start);
    }
    Lose(gone ? ResyncReason::kSlotLost : ResyncReason::kError, e.what());
    return gone && !aborted_ ? Outcome::kLost : Outcome::kFailed;
  }
}

bool ChangeFeed::EnsureSlot() {
  if (have_slot_) return true;
  if (aborted_ || Clock::now() < next_creation_) return false;
  auto start = Clock::now();
  try {
    pqxx::connection& connection = session_.Connection();
    Reap(connection);
    if (session_.sql_backend_pid() != inspected_backend_pid_) {
      // Each new session: the server, the role or the publication may have
      // changed since the last one (the setup script run meanwhile). The
      // coverage is read first: whatever changes after it, also before the
      // slot exists, differs from it on the first drain.
      Coverage coverage = ReadCoverage(connection, options_.slot.publication, options_.tables, {});
      FeedVerdict verdict =
          InspectPublication(connection, options_.slot.publication, options_.tables);
      std::string text = verdict.Describe();
      if (text != logged_verdict_) {
        // Once per change of the verdict, not every cycle.
        std::string cannot_map;
        for (const auto& kind : verdict.unmappable) {
          cannot_map += (cannot_map.empty() ? "" : "; ") + kind;
        }
        std::string warnings;
        for (const auto& warning : verdict.warnings) {
          warnings += (warnings.empty() ? "" : "; ") + warning;
        }
        if (!verdict.usable) {
          log::Warn("incremental mode: off: " + verdict.off_reason);
        } else if (!warnings.empty()) {
          log::Warn("incremental mode: on", {{"cannot_map", cannot_map}, {"warning", warnings}});
        } else {
          log::Info("incremental mode: on", {{"cannot_map", cannot_map}});
        }
        logged_verdict_ = text;
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        off_reason_ = verdict.usable ? "" : verdict.off_reason;
      }
      if (!verdict.usable) {
        if (!coverage_lost_.empty()) coverage_lost_ = verdict.off_reason;
        session_.Disconnect();
        DelayNextCreation();
        return false;
      }
      verified_coverage_ = std::move(coverage);
      inspected_backend_pid_ = session_.sql_backend_pid();
    }
    creation_xids_ = session_.CreateSlot();
  } catch (const std::exception& e) {
    bool first = create_backoff_.attempts() == 0;
    session_.Disconnect();
    inspected_backend_pid_ = 0;
    DelayNextCreation();
    if (first || create_backoff_.attempts() % 10 == 0) {
      log::Warn("change feed: cannot create the replication slot; full passes meanwhile",
                {{"error", e.what()},
                 {"attempt", std::to_string(create_backoff_.attempts())},
                 {"waited_s", std::to_string(SecondsSince(start))}});
    }
    std::lock_guard<std::mutex> lock(mutex_);
    off_reason_ = std::string("cannot create the replication slot: ") + e.what();
    return false;
  }
  have_slot_ = true;
  slot_name_ = session_.slot_name();
  slot_pid_ = session_.backend_pid();
  ++generation_;
  generation_reason_ = next_reason_;
  decoder_ = std::make_unique<ChangeDecoder>(options_.tables, RelationsByOid(verified_coverage_));
  decoder_->SetMonitoredWords(options_.monitored_words);
  decoded_before_ = 0;
  create_backoff_.Reset();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    off_reason_.clear();
    if (generation_ == 1) stats_.CountResync(ResyncReason::kStartup);
  }
  log::Info("change feed: replication slot created",
            {{"slot", session_.slot_name()},
             {"generation", std::to_string(generation_)},
             {"reason", ResyncLabel(generation_reason_)},
             {"backend_pid", std::to_string(session_.backend_pid())},
             {"in_progress_xids", std::to_string(creation_xids_.size())},
             {"waited_s", std::to_string(SecondsSince(start))}});
  if (!coverage_lost_.empty()) {
    log::Info("change feed: coverage whole again; a full pass follows",
              {{"was", coverage_lost_}, {"slot", session_.slot_name()}});
    coverage_lost_.clear();
  }
  return true;
}

void ChangeFeed::Lose(ResyncReason reason, const std::string& why) {
  drain_cost_.Reset();
  if (!have_slot_) return;
  have_slot_ = false;
  next_reason_ = reason;
  // Disconnecting drops the temporary slot with its backend (if the error
  // has not already), unless the path to the server stalled: then the
  // backend lives on, and the next session ends it (Reap).
  if (slot_pid_ != 0) given_up_.push_back({slot_name_, slot_pid_});
  slot_pid_ = 0;
  session_.Disconnect();
  inspected_backend_pid_ = 0;
  if (reason == ResyncReason::kCoverage) coverage_lost_ = why;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.up = false;
    if (!aborted_) stats_.CountResync(reason);
  }
  if (reason == ResyncReason::kCoverage) {
    log::Warn("change feed: the publication's coverage of the watched tables changed; slot "
              "dropped, full passes until it is whole again",
              {{"change", why}, {"slot", slot_name_}});
  } else if (!aborted_) {
    log::Warn("change feed: slot dropped; a new slot and a full pass follow",
              {{"reason", ResyncLabel(reason)}, {"error", why},
               {"slot", session_.slot_name()}});
  }
}

void ChangeFeed::Reap(pqxx::connection& connection) {
  ReapResult result =
      ReapSlots(connection, given_up_, options_.slot.slot_prefix, options_.slot.statement_timeout);
  for (const auto& slot : result.ended) {
    log::Info("change feed: ended the session of a slot it gave up",
              {{"slot", slot.slot_name}, {"backend_pid", std::to_string(slot.backend_pid)}});
  }
  for (const auto& name : result.dropped) {
    log::Warn("change feed: dropped an inactive slot of its prefix", {{"slot", name}});
  }
  if (!result.remaining.empty() || result.inactive_left > 0) {
    std::string names;
    for (const auto& slot : result.remaining) {
      names += (names.empty() ? "" : ", ") + slot.slot_name + " (backend " +
               std::to_string(slot.backend_pid) + ")";
    }
    log::Warn("change feed: slots of its prefix it cannot clear hold WAL",
              {{"given_up", names}, {"inactive", std::to_string(result.inactive_left)}});
  }
  given_up_ = std::move(result.remaining);
  inactive_left_ = static_cast<std::uint64_t>(result.inactive_left);
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.orphan_slots = given_up_.size() + inactive_left_;
}

std::string ChangeFeed::CoverageChange() {
  std::set<std::uint32_t> known;
  for (const auto& relation : verified_coverage_.relations) known.insert(relation.oid);
  Coverage now;
  {
    SlotSession::Watch watch(session_, options_.slot.statement_timeout);
    pqxx::connection& connection = session_.Connection();
    now = ReadCoverage(connection, options_.slot.publication, options_.tables, known);
    if (!given_up_.empty()) {
      // A slot left behind may end later by itself (TCP keepalive).
      given_up_ = StillThere(connection, given_up_);
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.orphan_slots = given_up_.size() + inactive_left_;
    }
  }
  return DescribeCoverageChange(verified_coverage_, now, options_.slot.publication);
}

void ChangeFeed::DelayNextCreation() { next_creation_ = Clock::now() + create_backoff_.Next(); }

std::string ChangeFeed::RenderMetrics() const { return RenderChangesMetrics(stats()); }

FeedStats ChangeFeed::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void ChangeFeed::NoteFullPassCost(double seconds) { drain_cost_.NoteFullPassCost(seconds); }

std::shared_ptr<pqxx::connection> ChangeFeed::shared_connection() const {
  return session_.shared_connection();
}

void ChangeFeed::Abort() {
  aborted_ = true;
  session_.Cancel();
}

ResyncReason ChangeFeed::generation_reason() const { return generation_reason_; }

std::string ChangeFeed::off_reason() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return off_reason_;
}

std::unique_ptr<ChangeSource> MakeChangeFeed(const config::Config& config) {
  return std::make_unique<ChangeFeed>(FeedOptionsOf(config));
}

}  // namespace seatwatch::changes
