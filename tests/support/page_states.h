#pragma once

#include <memory>
#include <string>
#include <vector>

#include "checks/holds_check.h"
#include "cleanup/cleanup_status.h"
#include "locks/lock_poll.h"
#include "metrics/check_output.h"
#include "metrics/poll_state.h"

// Poll states made by hand for the status page's unit tests, and the page
// rendered from them as the daemon renders it.
namespace seatwatch::testing {

// A poll state published at now_unix - 1 with the database up, version
// "1.2.3", a 10 s poll interval, and no check.
metrics::PollState PageState(double now_unix);

// A check that ran successfully 2 s before now_unix (every 10 s, 0.25 s).
metrics::CheckStatus RanCheck(const std::string& name, metrics::CheckOutput output, double now_unix);

// The output of a locks check that read `poll`.
metrics::CheckOutput LocksOutput(std::shared_ptr<const locks::LockPoll> poll);

// The output of a holds check that counted `holds`.
metrics::CheckOutput HoldsOutput(const checks::HoldsCounts& holds);

// The status page of `state` at now_unix, through the snapshot.
std::string RenderPage(const metrics::PollState& state,
                       std::shared_ptr<const cleanup::CleanupStatus> cleanup, double now_unix);

// Expects each of `present` in `page` and none of `absent`; a failure names
// the part and shows the page.
void ExpectPageParts(const std::string& page, const std::vector<std::string>& present,
                     const std::vector<std::string>& absent = {});

}  // namespace seatwatch::testing
