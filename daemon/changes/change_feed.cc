#include <stdexcept>

#include "changes/change_source.h"

namespace seatwatch::changes {

std::unique_ptr<ChangeSource> MakeChangeFeed(const config::Config&) {
  throw std::logic_error("change feed: not yet implemented");
}

}  // namespace seatwatch::changes
