#include "poll/scheduled_check.h"

#include "metrics/family_text.h"
#include "util/log.h"

namespace seatwatch::poll {

void InitErrorCounters(metrics::CheckStatus& status) {
  for (auto reason : db::kAllFailureReasons) status.errors.emplace(db::ReasonLabel(reason), 0);
}

void RecordSuccess(ScheduledCheck& entry, metrics::CheckOutput output, double duration_seconds,
                   double now_unix) {
  auto& status = entry.status;
  if (status.has_run && !status.success) {
    log::Info("check recovered", {{"check", status.name}});
  }
  status.has_run = true;
  status.success = true;
  status.duration_seconds = duration_seconds;
  status.database_seconds = 0;
  status.last_success_unix = now_unix;
  status.last_error.clear();
  status.last_reason.clear();
  std::string rendered = metrics::RenderText(std::move(output.families));
  if (rendered.empty()) {
    rendered = std::move(output.text);
  } else {
    rendered += output.text;
  }
  auto text = std::make_shared<metrics::RenderedText>();
  if (!rendered.empty() || output.parts.empty()) {
    text->parts.push_back(std::make_shared<const std::string>(std::move(rendered)));
  }
  for (auto& part : output.parts) text->parts.push_back(std::move(part));
  status.rendered = std::move(text);
  // The rendered text is the only copy kept.
  output.families = {};
  output.text = {};
  output.parts = {};
  status.output = std::make_shared<const metrics::CheckOutput>(std::move(output));
}

void RecordFailure(ScheduledCheck& entry, db::FailureReason reason, const std::string& message,
                   double duration_seconds) {
  auto& status = entry.status;
  std::string label = db::ReasonLabel(reason);
  std::string text = message;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  bool changed = !status.has_run || status.success || status.last_reason != label;
  status.has_run = true;
  status.success = false;
  status.duration_seconds = duration_seconds;
  status.database_seconds = 0;
  status.errors[label] += 1;
  status.last_error = text;
  status.last_reason = label;
  // No stale "ok": a failing check exports nothing but its own health.
  status.output.reset();
  status.rendered.reset();
  if (changed) {
    log::Warn("check failed", {{"check", status.name}, {"reason", label}, {"error", text}});
  } else {
    log::Debug("check still failing",
               {{"check", status.name}, {"reason", label}, {"error", text}});
  }
}

void CountFailedAttempt(ScheduledCheck& entry, db::FailureReason reason) {
  entry.status.errors[db::ReasonLabel(reason)] += 1;
}

}  // namespace seatwatch::poll
