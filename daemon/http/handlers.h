#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "http/server.h"
#include "metrics/snapshot.h"

namespace seatwatch::http {

// Pre-rendered metric text owned by another component (the cleanup worker),
// appended to /metrics. Must be thread-safe and must not touch the database.
using MetricsSource = std::function<std::shared_ptr<const std::string>()>;

// Wires /metrics, /healthz, /readyz, /api/invariants and /api/locks onto
// the server (the status page at / is page::RegisterStatusPage). Every
// handler reads the last published snapshot only.
void RegisterHandlers(Server& server, const metrics::SnapshotStore& store,
                      std::vector<MetricsSource> extra_metrics);

// Ready: the last poll of each lane with checks reached the database and the
// latest successful poll is younger than three poll intervals. Pure, for
// tests.
bool IsReady(const metrics::Snapshot& snapshot, double now_unix, std::string* why);

}  // namespace seatwatch::http
