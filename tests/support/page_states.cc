#include "support/page_states.h"

#include <gtest/gtest.h>

#include "metrics/snapshot_builder.h"
#include "page/page_model.h"
#include "page/page_renderer.h"

namespace seatwatch::testing {

metrics::PollState PageState(double now_unix) {
  metrics::PollState state;
  state.version = "1.2.3";
  state.database_up = true;
  state.last_poll_unix = now_unix - 1;
  state.last_successful_poll_unix = now_unix - 1;
  state.poll_interval_seconds = 10;
  return state;
}

metrics::CheckStatus RanCheck(const std::string& name, metrics::CheckOutput output,
                              double now_unix) {
  metrics::CheckStatus check;
  check.name = name;
  check.interval_seconds = 10;
  check.has_run = true;
  check.success = true;
  check.duration_seconds = 0.25;
  check.last_success_unix = now_unix - 2;
  check.output = std::make_shared<const metrics::CheckOutput>(std::move(output));
  return check;
}

metrics::CheckOutput LocksOutput(std::shared_ptr<const locks::LockPoll> poll) {
  metrics::CheckOutput output;
  output.facts = std::move(poll);
  return output;
}

metrics::CheckOutput HoldsOutput(const checks::HoldsCounts& holds) {
  metrics::CheckOutput output;
  output.facts = holds;
  return output;
}

std::string RenderPage(const metrics::PollState& state,
                       std::shared_ptr<const cleanup::CleanupStatus> cleanup, double now_unix) {
  return page::RenderStatusPage(
      page::BuildPageModel(metrics::BuildSnapshot(state), std::move(cleanup), now_unix));
}

void ExpectPageParts(const std::string& page, const std::vector<std::string>& present,
                     const std::vector<std::string>& absent) {
  for (const auto& part : present) {
    EXPECT_NE(page.find(part), std::string::npos) << "missing: " << part << "\n" << page;
  }
  for (const auto& part : absent) {
    EXPECT_EQ(page.find(part), std::string::npos) << "present: " << part << "\n" << page;
  }
}

}  // namespace seatwatch::testing
