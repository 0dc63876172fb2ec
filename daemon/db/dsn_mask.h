#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace seatwatch::db {

// Whether a libpq connection option holds a secret: password, sslpassword
// (the client key's passphrase) and any option whose name contains
// "password", "secret", "token" or "passphrase" (compared case-insensitively,
// so that a misspelt key in a refused DSN counts too).
bool IsSecretOption(std::string_view keyword);

// The DSN as logs, metrics, --once and --check-config show it: rebuilt from
// libpq's own parse (PQconninfoParse, which also decodes URI percent-encoding)
// as key=value pairs in libpq's order, every secret option as "****". A DSN
// libpq cannot parse is shown as "<unparsable DSN>" and nothing of its text.
// A URI whose credentials hold an unencoded '/' or '@' is misread by libpq
// (part of the password becomes the port, the host or the database name): it
// is shown with the credentials masked and a note to percent-encode them.
// Linear in the DSN's length; no regular expressions.
std::string MaskDsn(const std::string& dsn);

// The secret-looking parts of one DSN, found once, to remove from messages
// that may quote them: libpq's errors quote the DSN fragment they refuse
// ("invalid integer value "..." for connection option "port""), and so do
// the exceptions that carry them. Thread-compatible; immutable once built.
class DsnSecrets {
 public:
  DsnSecrets() = default;
  explicit DsnSecrets(const std::string& dsn);

  // `message` with every occurrence of every secret (as written and as
  // percent-decoded, and for a misread URI each piece libpq cut it into)
  // replaced by "****"; linear in the message per secret. A DSN with more
  // than 64 secret-looking values gets a placeholder instead of any message.
  std::string Scrub(std::string_view message) const;

 private:
  std::vector<std::string> secrets_;  // longest first
};

// DsnSecrets(dsn).Scrub(message), for a one-off message.
std::string ScrubDsnSecrets(std::string_view message, const std::string& dsn);

}  // namespace seatwatch::db
