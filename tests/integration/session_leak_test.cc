// A session whose connection the server closes, again and again, must not
// grow the heap: libpqxx 6.4 leaked about 2.3 KB (a libpq error result) per
// lost connection when the next statement found the connection dead.
#include <gtest/gtest.h>
#include <malloc.h>

#include <chrono>
#include <cstddef>
#include <pqxx/except>
#include <pqxx/nontransaction>
#include <pqxx/transaction>
#include <string>

#include "db/session.h"
#include "support/scratch_db.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// From the sanitizer runtime (gcc ships no sanitizer/allocator_interface.h).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::ScratchDatabase;

// Bytes the program has allocated and not freed (the sanitizers replace
// malloc, and mallinfo2 then knows nothing).
std::size_t HeapInUse() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return __sanitizer_get_current_allocated_bytes();
#else
  return mallinfo2().uordblks;
#endif
}

class SessionLeakTest : public ::testing::Test {
 protected:
  SessionLeakTest() : db_("sw_session_leak", ScratchDatabase::Schema::kNone), admin_(db_.Connect()) {
    settings_.application_name = "seatwatch-leak-test";
  }

  // One statement on the session's connection, the way the poller runs one;
  // when it finds the connection broken, the session reconnects once.
  int RunStatement(db::Session& session) {
    for (int attempt = 0;; ++attempt) {
      try {
        pqxx::read_transaction tx(session.Connection());
        return tx.exec1("SELECT pg_backend_pid()")[0].as<int>();
      } catch (const pqxx::broken_connection&) {
        session.CheckAfterError();
        if (attempt > 0) throw;
      }
    }
  }

  // The server closes the idle session (as pg_terminate_backend,
  // idle_session_timeout or a restart do), and it has gone when this returns.
  void KillBackend(int pid) {
    pqxx::nontransaction tx(*admin_);
    ASSERT_TRUE(tx.exec1("SELECT pg_terminate_backend(" + std::to_string(pid) + ", 10000)")[0].as<bool>());
  }

  ScratchDatabase db_;
  std::unique_ptr<pqxx::connection> admin_;
  db::SessionSettings settings_;
};

TEST_F(SessionLeakTest, LostConnectionsDoNotGrowTheHeap) {
  db::Session session(db_.dsn(), settings_, 1000ms);
  int pid = RunStatement(session);
  auto cycle = [&] {
    KillBackend(pid);
    int next = RunStatement(session);
    EXPECT_NE(next, pid) << "the session must be on a new backend";
    pid = next;
  };
  for (int i = 0; i < 5; ++i) cycle();  // one-time allocations happen here

  constexpr int kCycles = 40;
  std::size_t before = HeapInUse();
  for (int i = 0; i < kCycles; ++i) cycle();
  std::size_t after = HeapInUse();
  long growth = static_cast<long>(after) - static_cast<long>(before);
  // The leak was ~2264 bytes per cycle (90 KB here); allow a little noise.
  EXPECT_LT(growth, 16 * 1024) << "heap grew by " << growth << " bytes over " << kCycles
                               << " lost connections (" << growth / kCycles << " per connection)";
}

}  // namespace
}  // namespace seatwatch
