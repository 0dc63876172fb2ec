#include "http/bcrypt_queue.h"

#include "http/bcrypt.h"

namespace seatwatch::http {

namespace {

// Passes the turn on when the bcrypt ends, also by an exception.
class Turn {
 public:
  Turn(std::mutex& mutex, std::condition_variable& turn, uint64_t& serving)
      : mutex_(mutex), turn_(turn), serving_(serving) {}
  ~Turn() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++serving_;
    }
    turn_.notify_all();
  }
  Turn(const Turn&) = delete;
  Turn& operator=(const Turn&) = delete;

 private:
  std::mutex& mutex_;
  std::condition_variable& turn_;
  uint64_t& serving_;
};

}  // namespace

std::optional<BcryptQueue::Result> BcryptQueue::Matches(std::string_view password, const std::string& hash) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (next_ticket_ - serving_ >= capacity_) {
      ++refused_;
      return std::nullopt;
    }
    uint64_t ticket = next_ticket_++;
    turn_.wait(lock, [&] { return serving_ == ticket; });
    ++runs_;
  }
  Turn turn(mutex_, turn_, serving_);
  Result result;
  auto start = std::chrono::steady_clock::now();
  result.matches = BcryptMatches(password, hash);
  result.took = std::chrono::steady_clock::now() - start;
  return result;
}

uint64_t BcryptQueue::runs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return runs_;
}

uint64_t BcryptQueue::refused() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return refused_;
}

uint64_t BcryptQueue::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return next_ticket_ - serving_;
}

}  // namespace seatwatch::http
