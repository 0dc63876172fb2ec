#include "page/status_route.h"

#include <chrono>

#include "page/page_model.h"
#include "page/page_renderer.h"

namespace seatwatch::page {

void RegisterStatusPage(http::Server& server, const metrics::SnapshotStore& store,
                        CleanupStatusSource cleanup_status) {
  server.Route("/", [&store, cleanup_status]() {
    auto snapshot = store.Current();
    double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    PageModel model = BuildPageModel(*snapshot, cleanup_status ? cleanup_status() : nullptr, now);
    http::Response response;
    response.Text(200, RenderStatusPage(model), "text/html; charset=utf-8");
    return response;
  });
}

}  // namespace seatwatch::page
