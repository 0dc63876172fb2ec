#pragma once

#include <string>

#include "db/server_facts.h"

namespace seatwatch::metrics {

// One lane's facts, as the merged state keeps them ("checks", "locks").
struct LaneServer {
  std::string lane;
  db::ServerFacts facts;
};

}  // namespace seatwatch::metrics
