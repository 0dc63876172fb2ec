#pragma once

#include <stdexcept>

namespace seatwatch::changes {

// A pgoutput message that cannot be read: truncated, malformed, of an unknown
// type, or out of order (a change of a relation never announced, a Commit
// without a Begin). The change feed cannot tell which keys such a stream
// changed, so it starts over (a new slot and a full pass). The text names
// the message type and the byte offset where reading stopped.
class PgoutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace seatwatch::changes
