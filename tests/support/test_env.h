#pragma once

#include <string>

namespace seatwatch::testing {

// The repository root (SEATWATCH_SOURCE_DIR). Each of these defaults to the
// build's own paths; the environment variable of the same name overrides it.
std::string SourceDir();
// The built daemon (SEATWATCH_BINARY).
std::string SeatwatchBinary();
// The scratch cluster's folder (TEST_PG_DIR): its port file and socket.
std::string ScratchPgDir();
// Reads a whole file; throws if it cannot.
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& text);
// A fresh empty directory under the system temp dir.
std::string MakeTempDir(const std::string& prefix);
// A TCP port on 127.0.0.1 that was free a moment ago.
int FreePort();
// Runs a shell command, returns its exit status and stdout+stderr.
int RunCommand(const std::string& command, std::string* output);

}  // namespace seatwatch::testing
