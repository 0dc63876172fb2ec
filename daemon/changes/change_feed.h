#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "changes/change_source.h"
#include "changes/changes_metrics.h"
#include "changes/coverage.h"
#include "changes/drain_cost_policy.h"
#include "changes/publication_inspector.h"
#include "changes/session_sightings.h"
#include "changes/slot_reaper.h"
#include "changes/slot_session.h"
#include "db/backoff.h"

namespace seatwatch::changes {

class ChangeDecoder;

struct ChangeFeedOptions {
  SlotSessionOptions slot;
  std::map<std::string, std::string> tables;  // watched table -> key column
  // watched table -> the words of its entries' SQL (SqlWords): the columns
  // provenance keeps values of.
  std::map<std::string, std::set<std::string>> monitored_words;
};

// The change feed: one temporary logical replication slot on a dedicated
// session (SlotSession), drained and decoded into keys per transaction.
// Every failure means a new slot (a new generation) and a full pass of the
// incremental checks; nothing is ever retried on the same slot after an
// error, since the error has dropped it.
//
// Coverage: what the publication sends of the watched tables is read
// (ReadCoverage) before the publication is verified for a new slot, and
// again after every drain; pgoutput's Relation messages are checked against
// the relations verified, by OID. Any change (a table dropped from the
// publication, an action no longer published, a watched table renamed or
// made anew) drops the slot (resync coverage): changes may have been
// decoded under a coverage nobody verified. The feed then stays down, its
// batches saying why (coverage_lost), until a new session finds the
// publication whole again; the next slot's full pass covers the gap.
//
// A slot session given up (stalled, failed, dropped) is ended on the server
// before the next slot is made (ReapSlots): behind a stalled path its backend
// would keep its temporary slot, and WAL, until TCP keepalive gives up.
//
// Thread-safety: as ChangeSource.
class ChangeFeed : public ChangeSource {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ChangeFeed(ChangeFeedOptions options);
  ~ChangeFeed() override;

  ChangeBatch Drain() override;
  std::string RenderMetrics() const override;
  void NoteFullPassCost(double seconds) override;
  std::shared_ptr<pqxx::connection> shared_connection() const override;
  void Abort() override;
  ResyncReason generation_reason() const override;
  std::string off_reason() const override;

  // For tests and the log.
  FeedStats stats() const;
  const std::string& slot_name() const { return session_.slot_name(); }
  int backend_pid() const { return session_.backend_pid(); }
  std::uint64_t generation() const { return generation_; }

 private:
  enum class Outcome { kDrained, kLost, kFailed };
  // One drain of the slot into `batch`; on any failure the slot is dropped.
  Outcome DrainSlot(ChangeBatch& batch);
  // Creates the slot if there is none and it is time to try; false while
  // there is none.
  bool EnsureSlot();
  // The slot is gone or given up: drop the session, count why.
  void Lose(ResyncReason reason, const std::string& why);
  // On a fresh session, before anything else: ends the sessions of slots
  // given up earlier, drops leftover slots of the prefix, counts the rest.
  void Reap(pqxx::connection& connection);
  // What changed of the coverage verified for the current slot (empty:
  // nothing), read on the slot session; also recounts given-up slots.
  std::string CoverageChange();
  void DelayNextCreation();

  const ChangeFeedOptions options_;
  SlotSession session_;
  std::unique_ptr<ChangeDecoder> decoder_;
  SessionSightings sightings_;
  std::uint64_t decoded_before_ = 0;  // decoder_->decoded_changes() already counted
  bool have_slot_ = false;
  std::uint64_t generation_ = 0;
  std::vector<std::uint64_t> creation_xids_;
  std::string slot_name_;  // the current slot and its backend
  int slot_pid_ = 0;
  Coverage verified_coverage_;  // read before the current slot's publication was verified
  // Set when coverage changed, until a slot is made again: what is missing.
  std::string coverage_lost_;
  std::vector<GivenUpSlot> given_up_;  // still to be ended on the server
  std::uint64_t inactive_left_ = 0;    // inactive slots of the prefix not dropped
  ResyncReason next_reason_ = ResyncReason::kStartup;
  ResyncReason generation_reason_ = ResyncReason::kStartup;
  DrainCostPolicy drain_cost_;
  db::Backoff create_backoff_;
  Clock::time_point next_creation_{};
  int inspected_backend_pid_ = 0;
  std::string logged_verdict_;
  std::atomic<bool> aborted_{false};

  mutable std::mutex mutex_;  // guards stats_ and off_reason_
  FeedStats stats_;
  std::string off_reason_;
};

}  // namespace seatwatch::changes
