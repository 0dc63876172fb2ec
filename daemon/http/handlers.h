#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cleanup/cleanup_status.h"
#include "http/server.h"
#include "metrics/snapshot.h"

namespace seatwatch::http {

// Pre-rendered metric text owned by another component (the cleanup worker),
// appended to /metrics. Must be thread-safe and must not touch the database.
using MetricsSource = std::function<std::shared_ptr<const std::string>()>;

// The cleanup's last published status, for the status page. Must be
// thread-safe and must not touch the database; null when not known.
using CleanupStatusSource = std::function<std::shared_ptr<const cleanup::CleanupStatus>()>;

// Wires /metrics, /healthz, /readyz, /api/invariants, /api/locks and the
// status page / onto the server. Every handler reads the last published
// snapshot only (and the page the cleanup's status).
void RegisterHandlers(Server& server, const metrics::SnapshotStore& store,
                      std::vector<MetricsSource> extra_metrics,
                      CleanupStatusSource cleanup_status = nullptr);

// Ready: the last poll of each lane with checks reached the database and the
// latest successful poll is younger than three poll intervals. Pure, for
// tests.
bool IsReady(const metrics::Snapshot& snapshot, double now_unix, std::string* why);

}  // namespace seatwatch::http
