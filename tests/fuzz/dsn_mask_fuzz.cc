// DSN masking: any text, key=value or URI, is masked without a crash, and
// when libpq itself finds a password in it, the masked text does not carry
// that password (checked for passwords long enough not to occur in the
// rest of the text by chance).
#include <libpq-fe.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "db/conninfo.h"

namespace {

std::size_t Count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

// Secrets libpq parses out of the DSN (password, sslpassword).
void CheckSecretsMasked(const std::string& dsn, const std::string& masked) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(dsn.c_str(), &error);
  if (error) PQfreemem(error);
  if (!options) return;
  for (PQconninfoOption* option = options; option->keyword; ++option) {
    bool secret = std::strcmp(option->keyword, "password") == 0 ||
                  std::strcmp(option->keyword, "sslpassword") == 0;
    if (!secret || !option->val) continue;
    std::string value = option->val;
    if (value.size() < 8 || value.find('*') != std::string::npos) continue;
    // A secret that appears once, verbatim, in the input must not survive.
    if (Count(dsn, value) == 1 && masked.find(value) != std::string::npos) std::abort();
  }
  PQconninfoFree(options);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string dsn(reinterpret_cast<const char*>(data), size);
  if (dsn.find('\0') != std::string::npos) return 0;  // libpq reads C strings
  std::string masked = seatwatch::db::MaskDsn(dsn);
  CheckSecretsMasked(dsn, masked);
  return 0;
}
