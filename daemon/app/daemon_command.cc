#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <future>
#include <thread>

#include "app/commands.h"
#include "app/http_security.h"
#include "app/scoped_proof_gate.h"
#include "checks/registry.h"
#include "cleanup/cleanup_service.h"
#include "config/load.h"
#include "config/overrides.h"
#include "http/handlers.h"
#include "http/server.h"
#include "metrics/snapshot.h"
#include "page/status_route.h"
#include "poll/poller_group.h"
#include "service/service_manager.h"
#include "util/heap.h"
#include "util/log.h"

namespace seatwatch::app {

namespace {

// Reloads the file; a bad new config is logged and the running one kept.
// LoadConfig reads only regular files of bounded size and refuses a file that
// configures no checks, so this returns promptly (SIGTERM is taken by the
// same thread) and an empty or truncated file cannot drop every check. A
// changed incremental entry has its scoped_sql proved first (at most a few
// statements under statement_timeout each); one proved wrong is refused.
std::optional<config::Config> TryReload(const std::string& path, const std::string& listen_override,
                                        ScopedProofGate& gate) {
  try {
    config::Config fresh = config::LoadConfig(path);
    config::ApplyEnvironment(fresh, config::ProcessEnvironment());
    if (!listen_override.empty()) fresh.http.listen = listen_override;
    if (!gate.Admit(fresh)) {
      log::Error("reload refused: a scoped_sql was proved wrong or a declared invariant does not "
                 "prove; keeping the running configuration",
                 {{"config", path}});
      return std::nullopt;
    }
    return fresh;
  } catch (const std::exception& e) {
    log::Error("reload failed; keeping the running configuration",
               {{"config", path}, {"error", e.what()}});
    return std::nullopt;
  }
}

// SIGTERM to exit, at most (docs/polling.md promises 2 s): whatever is still
// running then holds nothing worth waiting for.
constexpr std::chrono::milliseconds kStopBudget{1700};

}  // namespace

int DaemonCommand(config::Config config, const std::string& config_path,
                  const std::string& listen_override, const std::string& version) {
  // Signals are taken by sigwait on this thread only: every thread started
  // below inherits the blocked mask, so no handler runs in the middle of a
  // poll or a request. SIGHUP first, so that one sent during the proof
  // below waits for the loop; SIGTERM and SIGINT still end the process
  // during the proof, when nothing has started.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // A scoped_sql proved wrong is a config error: nothing starts (exit 2)
  // rather than an error every [changes] interval. An unreachable database
  // proves nothing and refuses nothing.
  ScopedProofGate gate;
  if (!gate.Admit(config)) {
    log::Error("refusing to start: a scoped_sql was proved wrong or a declared invariant "
               "does not prove", {{"config", config_path}});
    return 2;
  }
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  heap::ConfigureForDaemon();
  metrics::SnapshotStore store;
  // systemd's view (READY=1 after the first poll, the watchdog, reloads):
  // a no-op without NOTIFY_SOCKET. Made before the lanes, which call it.
  service::ServiceManager service;
  // The locks check in a lane of its own: a long poll of the others cannot
  // delay it.
  poll::PollerGroup pollers(config, checks::BuildChecks(config), store, version);
  service.Attach(pollers.progress(), config);

  // Sized so that a few hundred idle or hostile sockets cannot starve a
  // scraper: see http::ServerOptions. TLS and Basic auth from [http], their
  // certificate and users swapped on SIGHUP.
  http::ServerOptions server_options;
  HttpSecurity security(config.http);
  security.Apply(server_options);
  http::Server server(config.http.listen, server_options);
  // The only part that writes to the database; its own thread and connection.
  cleanup::CleanupService cleanup(config);
  http::RegisterHandlers(server, store, {cleanup.MetricsSource(), security.MetricsSource()});
  page::RegisterStatusPage(server, store, cleanup.StatusSource());
  try {
    server.Start();
  } catch (const std::exception& e) {
    log::Error("cannot start http server", {{"error", e.what()}});
    return 1;
  }

  pollers.Start();
  cleanup.Start();
  service.StartWatchdog();
  log::Info("seatwatch started", {{"version", version}, {"config", config_path}});

  while (true) {
    int signal = 0;
    if (sigwait(&signals, &signal) != 0) continue;
    if (signal == SIGHUP) {
      log::Info("SIGHUP: reloading configuration", {{"config", config_path}});
      service.Reloading();
      if (auto fresh = TryReload(config_path, listen_override, gate)) {
        log::SetLevel(log::ParseLevel(fresh->log_level));
        auto checks = checks::BuildChecks(*fresh);
        cleanup.Reload(*fresh);
        pollers.Reload(*fresh, std::move(checks));
        security.Reload(fresh->http);
        service.Reloaded(true);
      }
      service.Reloaded(false);  // READY=1 again; a no-op after Reloaded(true)
      continue;
    }
    log::Info("stopping", {{"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"}});
    break;
  }
  service.Stopping();  // STOPPING=1; no more watchdog pings
  auto deadline = std::chrono::steady_clock::now() + kStopBudget;
  auto left = [deadline] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
        std::max(deadline - std::chrono::steady_clock::now(),
                 std::chrono::steady_clock::duration::zero()));
  };
  pollers.Stop();         // each lane cancels the statement in flight
  cleanup.RequestStop();  // the batch in flight is cancelled and rolled back
  // The HTTP server stops meanwhile, not after: CivetWeb's mg_stop waits for
  // every worker, and one blocked on an idle keep-alive connection (every
  // Prometheus leaves one) sees the stop only at its next 2 s poll.
  std::promise<void> http_done;
  std::future<void> http_stopped = http_done.get_future();
  std::thread http_stopper([&server, &http_done] {
    server.Stop();
    http_done.set_value();
  });
  bool stopped = pollers.WaitFor(left()) && cleanup.WaitStopped(left());
  bool http = http_stopped.wait_for(left()) == std::future_status::ready;
  if (!stopped || !http) {
    // Only a lane or the cleanup inside a connect attempt (libpq bounds it by
    // connect_timeout alone, and it cannot be interrupted), or an HTTP
    // worker waiting on an idle client, can still be running; there is
    // nothing of either to save, and SIGTERM must not wait for them.
    log::Warn(stopped ? "http connections still open; exiting without waiting for them"
                      : "a lane or the cleanup is still connecting; exiting without waiting for it");
    log::Info("seatwatch stopped");
    std::_Exit(0);
  }
  http_stopper.join();
  cleanup.Stop();  // finished: joins its thread
  log::Info("seatwatch stopped");
  return 0;
}

}  // namespace seatwatch::app
