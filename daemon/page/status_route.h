#pragma once

#include <functional>
#include <memory>

#include "cleanup/cleanup_status.h"
#include "http/server.h"
#include "metrics/snapshot.h"

namespace seatwatch::page {

// The cleanup's last published status, for the status page. Must be
// thread-safe and must not touch the database; null when not known.
using CleanupStatusSource = std::function<std::shared_ptr<const cleanup::CleanupStatus>()>;

// Wires the status page at / onto the server: rendered per view from the
// last published snapshot and the cleanup's status, never from the database.
void RegisterStatusPage(http::Server& server, const metrics::SnapshotStore& store,
                        CleanupStatusSource cleanup_status);

}  // namespace seatwatch::page
