// --print-setup: the DBA's script for incremental mode on the config's tables.
#include <iostream>

#include "app/commands.h"
#include "changes/setup_script.h"

namespace seatwatch::app {

int PrintSetupCommand(const config::Config& config) {
  if (changes::KeyedTables(config).empty()) {
    std::cerr << "seatwatch: " << config.path
              << ": no entry is incremental (no declared check with a one-column key, no "
                 "hand-written entry with key, tables and scoped_sql): nothing to set up\n";
    return 2;
  }
  std::cout << changes::SetupScript(config);
  return 0;
}

}  // namespace seatwatch::app
