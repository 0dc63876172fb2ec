#include "checks/query_entry_check.h"

#include <typeinfo>

namespace seatwatch::checks {

QueryEntryCheck::QueryEntryCheck(config::QueryConfig entry, Millis interval,
                                 std::optional<IncrementalSettings> incremental)
    : entry_(std::move(entry)), interval_(interval) {
  if (incremental && entry_.incremental()) {
    incremental_ = std::make_unique<IncrementalSource>(entry_, *incremental);
  }
}

void QueryEntryCheck::AcceptChanges(const changes::ChangeBatch& batch,
                                    changes::ResyncReason generation_reason) {
  if (incremental_) incremental_->AcceptChanges(batch, generation_reason);
}

std::optional<metrics::IncrementalStatus> QueryEntryCheck::incremental_status() const {
  if (!incremental_) return std::nullopt;
  return incremental_->Status();
}

void QueryEntryCheck::TakeStateFrom(Check& previous) {
  // A reload may turn an [[invariant]] into a [[metric]] of the same name:
  // its rows are not read the same way.
  if (typeid(previous) != typeid(*this)) return;
  auto& old = static_cast<QueryEntryCheck&>(previous);
  if (incremental_ && old.incremental_) incremental_->TakeStateFrom(*old.incremental_);
}

BoundRows QueryEntryCheck::FetchRows(CheckContext& context) {
  return incremental_ ? incremental_->Fetch(context) : FetchEntryRows(context, entry_);
}

}  // namespace seatwatch::checks
