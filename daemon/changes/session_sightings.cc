#include "changes/session_sightings.h"

#include <string_view>

namespace seatwatch::changes {

// Separators that a name cannot hold once translate() has replaced them.
const char* const SessionSightings::kSightingsColumn =
    "(SELECT string_agg(a.backend_xid::text || E'\\x1f' || "
    "translate(coalesce(a.application_name, ''), E'\\x1e\\x1f', '  ') || E'\\x1f' || "
    "translate(coalesce(a.usename::text, ''), E'\\x1e\\x1f', '  ') || E'\\x1f' || "
    "coalesce(host(a.client_addr), 'local'), E'\\x1e') "
    "FROM pg_stat_activity a WHERE a.backend_xid IS NOT NULL "
    "AND a.datname = current_database() AND a.pid <> pg_backend_pid())";

namespace {

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

void SessionSightings::NoteAll(const std::string& aggregated) {
  if (aggregated.empty()) return;
  for (std::string_view row : Split(aggregated, '\x1e')) {
    auto fields = Split(row, '\x1f');
    if (fields.size() != 4 || fields[0].empty()) continue;
    std::uint64_t xid = 0;
    bool digits = true;
    for (char c : fields[0]) {
      if (c < '0' || c > '9') digits = false;
      xid = xid * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (!digits || xid > 0xffffffffu) continue;
    Note(static_cast<std::uint32_t>(xid),
         {std::string(fields[1]), std::string(fields[2]), std::string(fields[3])});
  }
}

void SessionSightings::Note(std::uint32_t xid, metrics::SessionSeen session) {
  auto [it, added] = by_xid_.insert_or_assign(xid, std::move(session));
  (void)it;
  if (!added) return;
  order_.push_back(xid);
  while (by_xid_.size() > kMaxSightings && !order_.empty()) {
    by_xid_.erase(order_.front());
    order_.pop_front();
  }
  // Taken xids leave their place in order_ behind: keep it bounded too.
  if (order_.size() > 2 * kMaxSightings) {
    std::deque<std::uint32_t> kept;
    for (auto noted : order_) {
      if (by_xid_.count(noted)) kept.push_back(noted);
    }
    order_ = std::move(kept);
  }
}

void SessionSightings::Attach(std::vector<TransactionChanges>& transactions) {
  for (auto& transaction : transactions) {
    auto it = by_xid_.find(transaction.xid);
    if (it == by_xid_.end()) continue;
    transaction.session = std::move(it->second);
    by_xid_.erase(it);
  }
}

}  // namespace seatwatch::changes
