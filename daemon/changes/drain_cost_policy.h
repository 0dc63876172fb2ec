#pragma once

namespace seatwatch::changes {

// When draining the slot costs more than it saves. A huge transaction (also
// one of an unwatched table: pgoutput decodes it whole before filtering) is
// decoded again on every drain until the slot's restart point passes it,
// which can take many seconds; a new slot starts at the current WAL and
// never decodes it again, for the price of one full pass. One slow drain is
// no evidence (a busy machine, a transaction decoded once and consumed), and
// on a small database a full pass costs a few milliseconds, less than any
// drain: so the slot is given up only after kConsecutive drains in a row that
// each cost more than the last full pass and more than kFloorSeconds.
class DrainCostPolicy {
 public:
  static constexpr double kFloorSeconds = 0.25;
  static constexpr int kConsecutive = 2;

  void NoteFullPassCost(double seconds) { full_pass_seconds_ = seconds; }
  double full_pass_seconds() const { return full_pass_seconds_; }

  // Records one drain; true when the slot should be given up now.
  bool Dear(double drain_seconds);
  // A new slot: earlier drains say nothing about it.
  void Reset() { dear_in_a_row_ = 0; }

 private:
  double full_pass_seconds_ = 0;  // 0: no full pass measured yet, never dear
  int dear_in_a_row_ = 0;
};

}  // namespace seatwatch::changes
