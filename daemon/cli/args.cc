#include "cli/args.h"

#include "config/names.h"

namespace seatwatch::cli {

Args ParseArgs(const std::vector<std::string>& argv) {
  Args args;
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string arg = argv[i];
    std::optional<std::string> inline_value;
    if (arg.rfind("--", 0) == 0) {
      auto eq = arg.find('=');
      if (eq != std::string::npos) {
        inline_value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
      }
    }
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= argv.size()) throw UsageError(arg + " needs a value");
      return argv[++i];
    };
    auto no_value = [&]() {
      if (inline_value) throw UsageError(arg + " takes no value");
    };
    if (arg == "--config" || arg == "-c") {
      args.config_path = value();
    } else if (arg == "--listen") {
      args.listen = value();
      // The same rule as [http] listen, so a bad override is a usage error
      // rather than a failure to bind after start-up.
      if (args.listen->size() > config::kMaxListenLength ||
          !config::IsListenAddress(*args.listen)) {
        throw UsageError("--listen: not HOST:PORT with a port in 1..65535");
      }
    } else if (arg == "--log-level") {
      args.log_level = value();
    } else if (arg == "--check-config") {
      no_value();
      args.check_config = true;
    } else if (arg == "--print-sql") {
      // NAME is optional: the next argument, unless it is another flag.
      if (inline_value) {
        args.print_sql = *inline_value;
      } else if (i + 1 < argv.size() && argv[i + 1].rfind("-", 0) != 0) {
        args.print_sql = argv[++i];
      } else {
        args.print_sql = "";
      }
    } else if (arg == "--print-setup") {
      no_value();
      args.print_setup = true;
    } else if (arg == "--once") {
      no_value();
      args.once = true;
    } else if (arg == "--version") {
      no_value();
      args.version = true;
    } else if (arg == "--help" || arg == "-h") {
      no_value();
      args.help = true;
    } else {
      throw UsageError("unknown argument \"" + argv[i] + "\"");
    }
  }
  if (args.check_config + args.once + args.print_sql.has_value() + args.print_setup > 1) {
    throw UsageError("--check-config, --once, --print-sql and --print-setup cannot be combined");
  }
  return args;
}

std::string UsageText() {
  return "usage: seatwatch [--config PATH]\n"
         "                 [--check-config | --once | --print-sql [NAME] | --print-setup]\n"
         "                 [--listen HOST:PORT]\n"
         "                 [--log-level debug|info|warn|error] [--version] [--help]\n"
         "\n"
         "Watches a PostgreSQL booking database: runs invariant checks on a schedule\n"
         "and serves the results as Prometheus metrics.\n"
         "\n"
         "  --config PATH      TOML config (default /etc/seatwatch/seatwatch.toml)\n"
         "  --check-config     validate the config (and, if the database is reachable,\n"
         "                     each query's columns) and exit\n"
         "  --once             run every check once, print a report, exit\n"
         "  --print-sql [NAME] print the SQL each check runs (full pass, scoped pass,\n"
         "                     detail), of one check or invariant with NAME, and exit\n"
         "  --print-setup      print the DBA's script that prepares the database for\n"
         "                     incremental mode on the config's tables, and exit\n"
         "  --listen HOST:PORT override [http] listen\n"
         "  --log-level LEVEL  override log_level\n"
         "\n"
         "Environment: SEATWATCH_DSN overrides [database] dsn, SEATWATCH_CHANGES_DSN\n"
         "[changes] dsn, SEATWATCH_CHECKS_DSN [checks] dsn (where the checks lane reads:\n"
         "a standby may serve it); libpq's PG* variables (PGHOST, PGPASSWORD, PGSSLMODE,\n"
         "...) apply as usual.\n"
         "\n"
         "Exit codes: 0 fine; 1 --once found a violated invariant or a failing check;\n"
         "2 usage or config error; 3 --once could not reach the database.\n";
}

}  // namespace seatwatch::cli
