// The files a config names (and the config file itself) are read only when
// they are regular files of a bounded size: a FIFO used to block start,
// --check-config and SIGHUP forever, /dev/zero to read until bad_alloc. Each
// load runs in a child process with a generous deadline, so a regression fails
// the test instead of hanging the suite.
#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "config/config_error.h"
#include "config/load.h"
#include "support/test_env.h"

namespace seatwatch::config {
namespace {

using namespace std::chrono_literals;

// Runs `load` in a child; returns what it reported ("ok" or the ConfigError
// text), or nullopt when it did not finish within `deadline` (then killed).
std::optional<std::string> RunWithDeadline(const std::function<void()>& load,
                                           std::chrono::milliseconds deadline) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    std::string result = "ok";
    try {
      load();
    } catch (const ConfigError& e) {
      result = std::string("ConfigError: ") + e.what();
    } catch (const std::exception& e) {
      result = std::string("other exception: ") + e.what();
    }
    ssize_t ignored = write(fds[1], result.data(), result.size());
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  auto end = std::chrono::steady_clock::now() + deadline;
  bool finished = false;
  while (!finished) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd waiting{fds[0], POLLIN, 0};
    if (poll(&waiting, 1, static_cast<int>(left.count())) <= 0) continue;
    char buffer[4096];
    ssize_t got = read(fds[0], buffer, sizeof buffer);
    if (got <= 0) {
      finished = true;
    } else {
      out.append(buffer, static_cast<size_t>(got));
    }
  }
  close(fds[0]);
  if (!finished) kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  if (!finished) return std::nullopt;
  return out;
}

class ConfigFilesTest : public ::testing::Test {
 protected:
  ConfigFilesTest() : dir_(testing::MakeTempDir("seatwatch-config-files")) {}

  std::string WriteConfig(const std::string& sql_path, const std::string& extra = "") {
    std::string path = dir_ + "/seatwatch.toml";
    testing::WriteFile(path, "[[invariant]]\nname = \"x\"\nsql = \"" + sql_path +
                                 "\"\nvalue = \"v\"\n" + extra);
    return path;
  }

  std::string Fifo(const std::string& name) {
    std::string path = dir_ + "/" + name;
    EXPECT_EQ(mkfifo(path.c_str(), 0600), 0);
    return path;
  }

  // The load's outcome, failing the test if it hung.
  std::string Load(const std::string& path) {
    auto result = RunWithDeadline([&] { LoadConfig(path); }, 20s);
    EXPECT_TRUE(result.has_value()) << "LoadConfig(" << path << ") did not return within 20s";
    return result.value_or("(hung)");
  }

  std::string dir_;
};

TEST_F(ConfigFilesTest, ARegularFileLoads) {
  testing::WriteFile(dir_ + "/a.sql", "SELECT 0 AS v;\n");
  EXPECT_EQ(Load(WriteConfig("a.sql")), "ok");
}

TEST_F(ConfigFilesTest, AFifoAsSqlIsRefusedAtOnce) {
  std::string fifo = Fifo("q.sql");
  std::string config = WriteConfig("q.sql");
  EXPECT_EQ(Load(config), "ConfigError: " + config + ":3:7: invariant.sql: cannot read " + fifo +
                              ": not a regular file (a FIFO)");
}

TEST_F(ConfigFilesTest, ADeviceAsSqlIsRefusedAtOnce) {
  std::string config = WriteConfig("/dev/zero");
  EXPECT_EQ(Load(config), "ConfigError: " + config +
                              ":3:7: invariant.sql: cannot read /dev/zero: not a regular file (a character device)");
}

TEST_F(ConfigFilesTest, AFolderAsSqlIsRefused) {
  std::string config = WriteConfig("/tmp");
  EXPECT_EQ(Load(config),
            "ConfigError: " + config + ":3:7: invariant.sql: cannot read /tmp: not a regular file (a directory)");
}

TEST_F(ConfigFilesTest, AnSqlFileOverOneMebibyteIsRefused) {
  testing::WriteFile(dir_ + "/big.sql", "SELECT 0 AS v --" + std::string(1 << 20, 'x') + "\n");
  std::string config = WriteConfig("big.sql");
  EXPECT_EQ(Load(config), "ConfigError: " + config + ":3:7: invariant.sql: cannot read " + dir_ +
                              "/big.sql: larger than 1 MiB (1048593 bytes)");
  testing::WriteFile(dir_ + "/edge.sql", "SELECT 0 AS v --" + std::string((1 << 20) - 17, 'x') + "\n");
  EXPECT_EQ(Load(WriteConfig("edge.sql")), "ok");
}

TEST_F(ConfigFilesTest, EveryFileTheConfigNamesIsChecked) {
  testing::WriteFile(dir_ + "/a.sql", "SELECT 0 AS v");
  Fifo("fifo.sql");
  std::string config = WriteConfig("a.sql", "detail_sql = \"fifo.sql\"\n");
  EXPECT_EQ(Load(config), "ConfigError: " + config + ":5:14: invariant.detail_sql: cannot read " + dir_ +
                              "/fifo.sql: not a regular file (a FIFO)");
  config = WriteConfig("a.sql", "[holds]\nsql = \"fifo.sql\"\n");
  EXPECT_EQ(Load(config), "ConfigError: " + config + ":5:1: holds.sql: cannot read " + dir_ +
                              "/fifo.sql: not a regular file (a FIFO)");
  config = WriteConfig("a.sql", "[cleanup]\nsql = \"/dev/zero\"\n");
  EXPECT_EQ(Load(config), "ConfigError: " + config +
                              ":5:1: cleanup.sql: cannot read /dev/zero: not a regular file (a character device)");
}

TEST_F(ConfigFilesTest, AConfigFileThatIsAFifoOrADeviceIsRefused) {
  std::string fifo = Fifo("seatwatch-fifo.toml");
  EXPECT_EQ(Load(fifo), "ConfigError: " + fifo + ": cannot read config file: not a regular file (a FIFO)");
  EXPECT_EQ(Load("/dev/zero"),
            "ConfigError: /dev/zero: cannot read config file: not a regular file (a character device)");
  EXPECT_EQ(Load(dir_ + "/missing.toml"),
            "ConfigError: " + dir_ + "/missing.toml: cannot read config file: No such file or directory");
  std::string big = dir_ + "/big.toml";
  testing::WriteFile(big, "# " + std::string(1 << 20, 'x') + "\n");
  EXPECT_EQ(Load(big), "ConfigError: " + big + ": cannot read config file: larger than 1 MiB (1048579 bytes)");
}

// An empty (or truncated) file would drop every check: refused unless the
// file says so.
TEST_F(ConfigFilesTest, AConfigWithNoChecksIsRefusedUnlessItSaysSo) {
  std::string path = dir_ + "/empty.toml";
  testing::WriteFile(path, "");
  EXPECT_EQ(Load(path), "ConfigError: " + path +
                            ": configures no checks (no [[invariant]], [[metric]], enabled [holds] or "
                            "[cleanup], or [locks] table); set allow_no_checks = true if that is intended");
  testing::WriteFile(path, "[database]\ndsn = \"postgresql:///booking\"\n");
  EXPECT_NE(Load(path).find("configures no checks"), std::string::npos);
  testing::WriteFile(path, "[locks]\nenabled = false\n");
  EXPECT_NE(Load(path).find("configures no checks"), std::string::npos);
  testing::WriteFile(path, "allow_no_checks = true\n");
  EXPECT_EQ(Load(path), "ok");
  testing::WriteFile(path, "[locks]\nresolve_rows = [\"seats\"]\n");
  EXPECT_EQ(Load(path), "ok");
}

}  // namespace
}  // namespace seatwatch::config
