// seatwatch: arguments -> config -> one of three commands -> exit code.
#include <filesystem>
#include <iostream>

#include "app/commands.h"
#include "cli/args.h"
#include "config/config_error.h"
#include "config/load.h"
#include "config/overrides.h"
#include "util/log.h"
#include "version.h"

namespace {

constexpr const char* kDefaultConfig = "/etc/seatwatch/seatwatch.toml";
constexpr int kExitUsage = 2;

}  // namespace

int main(int argc, char** argv) {
  using namespace seatwatch;
  cli::Args args;
  try {
    args = cli::ParseArgs(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const cli::UsageError& e) {
    std::cerr << "seatwatch: " << e.what() << "\n\n" << cli::UsageText();
    return kExitUsage;
  }
  if (args.help) {
    std::cout << cli::UsageText();
    return 0;
  }
  if (args.version) {
    std::cout << "seatwatch " << kVersion << "\n";
    return 0;
  }
  std::string path = args.config_path.value_or("");
  if (path.empty()) {
    if (!std::filesystem::exists(kDefaultConfig)) {
      std::cerr << "seatwatch: no --config given and " << kDefaultConfig << " does not exist\n\n"
                << cli::UsageText();
      return kExitUsage;
    }
    path = kDefaultConfig;
  }

  config::Config config;
  try {
    config = config::LoadConfig(path);
    config::ApplyEnvironment(config, config::ProcessEnvironment());
    if (args.listen) config.http.listen = *args.listen;
    if (args.log_level) config.log_level = *args.log_level;
    log::SetLevel(log::ParseLevel(config.log_level));
  } catch (const config::ConfigError& e) {
    std::cerr << "seatwatch: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::invalid_argument& e) {
    std::cerr << "seatwatch: " << e.what() << "\n";
    return kExitUsage;
  }

  try {
    if (args.check_config) return app::CheckConfigCommand(config);
    if (args.print_sql) return app::PrintSqlCommand(config, *args.print_sql);
    if (args.print_setup) return app::PrintSetupCommand(config);
    if (args.once) return app::OnceCommand(config, kVersion);
    return app::DaemonCommand(std::move(config), path, args.listen.value_or(""), kVersion);
  } catch (const std::invalid_argument& e) {
    // A DSN that libpq cannot parse is a configuration error.
    std::cerr << "seatwatch: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "seatwatch: " << e.what() << "\n";
    return 1;
  }
}
