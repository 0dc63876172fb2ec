#include "http/handlers.h"

#include <chrono>

#include "metrics/process_metrics.h"
#include "util/json_writer.h"

namespace seatwatch::http {

namespace {

constexpr const char* kMetricsType = "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kJsonType = "application/json";

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string JsonError(const std::string& message) {
  util::JsonWriter json;
  json.BeginObject().Key("error").String(message).EndObject();
  return json.str() + "\n";
}

}  // namespace

bool IsReady(const metrics::Snapshot& snapshot, double now_unix, std::string* why) {
  if (snapshot.last_successful_poll_unix <= 0) {
    *why = "no poll has reached the database yet";
    return false;
  }
  if (!snapshot.database_up) {
    *why = "the last poll could not reach the database";
    return false;
  }
  double age = now_unix - snapshot.last_successful_poll_unix;
  double limit = 3 * snapshot.poll_interval_seconds;
  if (age > limit) {
    *why = "the last successful poll is " + std::to_string(static_cast<long long>(age)) +
           "s old (limit " + std::to_string(static_cast<long long>(limit)) + "s)";
    return false;
  }
  return true;
}

void RegisterHandlers(Server& server, const metrics::SnapshotStore& store,
                      std::vector<MetricsSource> extra_metrics) {
  server.Route("/metrics", [&store, extra_metrics]() {
    auto snapshot = store.Current();
    Response response;
    response.content_type = kMetricsType;
    response.compressible = true;
    for (const auto& part : snapshot->metrics_parts) response.Append(part);
    for (const auto& source : extra_metrics) {
      if (auto text = source()) response.Append(std::move(text));
    }
    response.Append(std::make_shared<const std::string>(
        metrics::RenderProcessMetrics(metrics::ReadProcessStats())));
    return response;
  });
  server.Route("/healthz", []() {
    Response response;
    response.Text(200, "ok\n");
    return response;
  });
  server.Route("/readyz", [&store]() {
    Response response;
    std::string why;
    if (IsReady(*store.Current(), UnixNow(), &why)) {
      response.Text(200, "ready\n");
    } else {
      response.Text(503, "not ready: " + why + "\n");
    }
    return response;
  });
  server.Route("/api/invariants", [&store]() {
    auto snapshot = store.Current();
    Response response;
    response.content_type = kJsonType;
    response.Append(std::shared_ptr<const std::string>(snapshot, &snapshot->invariants_json));
    return response;
  });
  server.Route("/api/locks", [&store]() {
    auto snapshot = store.Current();
    Response response;
    auto it = snapshot->documents.find("locks");
    if (it == snapshot->documents.end()) {
      response.Text(503, JsonError("no current lock data: the locks check is disabled, has not "
                                   "run yet, or is failing (see seatwatch_check_success)"),
                    kJsonType);
      return response;
    }
    response.content_type = kJsonType;
    response.Append(std::shared_ptr<const std::string>(snapshot, &it->second));
    return response;
  });
}

}  // namespace seatwatch::http
