#include "db/dsn_mask.h"

#include <libpq-fe.h>

#include <algorithm>
#include <memory>

#include "db/libpq_options.h"

namespace seatwatch::db {

namespace {

constexpr std::string_view kMask = "****";
constexpr const char* kUnparsable = "<unparsable DSN>";
constexpr const char* kWithheld = "<message withheld: it may quote the DSN>";
// Each secret costs one linear pass over the message; a DSN with more
// secret-looking values than this (none real has) gets its messages withheld.
constexpr size_t kMaxSecrets = 64;


char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = Lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// %XX decoded as libpq decodes URI parts; anything else kept as written.
std::string PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      int high = HexValue(text[i + 1]);
      int low = HexValue(text[i + 2]);
      if (high >= 0 && low >= 0) {
        out.push_back(static_cast<char>(high * 16 + low));
        i += 2;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

// The length of libpq's URI designator at the start of `dsn`, or 0.
size_t UriPrefixLength(std::string_view dsn) {
  for (std::string_view prefix : {std::string_view("postgresql://"), std::string_view("postgres://")}) {
    if (dsn.substr(0, prefix.size()) == prefix) return prefix.size();
  }
  return 0;
}

// A URI after its designator, cut at the first '?'.
struct UriParts {
  std::string_view scheme;     // "postgresql://"
  std::string_view location;   // [user[:password]@]host[:port][/dbname]
  std::string_view query;      // after '?', empty if none
  bool has_query = false;
};

UriParts SplitUri(std::string_view dsn, size_t prefix) {
  UriParts parts;
  parts.scheme = dsn.substr(0, prefix);
  std::string_view rest = dsn.substr(prefix);
  size_t question = rest.find('?');
  parts.location = rest.substr(0, question);
  if (question != std::string_view::npos) {
    parts.query = rest.substr(question + 1);
    parts.has_query = true;
  }
  return parts;
}

// libpq looks for the credentials' '@' only up to the first '/': a '/' or a
// second '@' in an unencoded password moves part of it into host, port or
// database name. Such a location has an '@' after the first '/' or '@', and a
// ':' before its last '@'.
bool CredentialsMisread(std::string_view location) {
  size_t first = location.find_first_of("@/");
  size_t last_at = location.rfind('@');
  if (first == std::string_view::npos || last_at == std::string_view::npos || last_at <= first) {
    return false;
  }
  return location.substr(0, last_at).find(':') != std::string_view::npos;
}

// The password of a URI's credentials as written, up to the last '@'.
std::string_view UriPassword(std::string_view location) {
  size_t last_at = location.rfind('@');
  if (last_at == std::string_view::npos) return {};
  std::string_view credentials = location.substr(0, last_at);
  size_t colon = credentials.find(':');
  if (colon == std::string_view::npos) return {};
  return credentials.substr(colon + 1);
}

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '%' || c == '-';
}
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Every value written after a secret-looking key anywhere in the text (also
// inside another value, and in a DSN libpq refuses): key = value, key='v a l'
// with backslash escapes, ?key=value& in a URI. Each '=' looks back only to
// the name before it, so the scan is linear.
void AddKeyedValues(std::string_view dsn, bool uri, std::vector<std::string>& out) {
  for (size_t eq = dsn.find('='); eq != std::string_view::npos; eq = dsn.find('=', eq + 1)) {
    size_t end = eq;
    while (end > 0 && IsSpace(dsn[end - 1])) --end;
    size_t start = end;
    while (start > 0 && IsNameChar(dsn[start - 1])) --start;
    if (start == end || !IsSecretOption(PercentDecode(dsn.substr(start, end - start)))) continue;
    size_t i = eq + 1;
    while (i < dsn.size() && IsSpace(dsn[i])) ++i;
    if (i < dsn.size() && dsn[i] == '\'') {
      std::string value;
      size_t j = i + 1;
      for (; j < dsn.size() && dsn[j] != '\''; ++j) {
        if (dsn[j] == '\\' && j + 1 < dsn.size()) ++j;
        value.push_back(dsn[j]);
      }
      out.push_back(std::move(value));
      out.emplace_back(dsn.substr(i + 1, j - i - 1));
    } else {
      size_t j = i;
      while (j < dsn.size() && !IsSpace(dsn[j]) && !(uri && (dsn[j] == '&' || dsn[j] == '#'))) ++j;
      out.emplace_back(dsn.substr(i, j - i));
      out.push_back(PercentDecode(dsn.substr(i, j - i)));
      // Inside a quoted value (options='-c x.password=v') the quote ends it.
      size_t quote = dsn.substr(i, j - i).find('\'');
      if (quote != std::string_view::npos) out.emplace_back(dsn.substr(i, quote));
    }
  }
}

// A value for display: quoted as libpq reads it when it needs to be.
std::string DisplayValue(const std::string& value) {
  bool plain = !value.empty();
  for (char c : value) {
    if (IsSpace(c) || c == '\'' || c == '\\' || static_cast<unsigned char>(c) < 0x20) plain = false;
  }
  return plain ? value : QuoteLibpqValue(value);
}

// A misread URI, shown as the operator meant it: the credentials masked,
// host and database as written after the last '@', secret parameters masked.
std::string MaskMisreadUri(const UriParts& parts) {
  std::string_view location = parts.location;
  size_t last_at = location.rfind('@');
  std::string_view credentials = location.substr(0, last_at);
  std::string out(parts.scheme);
  out += credentials.substr(0, credentials.find(':'));
  out += ":****@";
  out += location.substr(last_at + 1);
  if (parts.has_query) {
    out += "?";
    std::string_view query = parts.query;
    bool first = true;
    while (true) {
      size_t amp = query.find('&');
      std::string_view item = query.substr(0, amp);
      if (!first) out += "&";
      first = false;
      size_t eq = item.find('=');
      if (eq != std::string_view::npos && IsSecretOption(PercentDecode(item.substr(0, eq)))) {
        out += item.substr(0, eq + 1);
        out += kMask;
      } else {
        out += item;
      }
      if (amp == std::string_view::npos) break;
      query = query.substr(amp + 1);
    }
  }
  out += " (the credentials hold an unencoded '/' or '@' that libpq misreads: percent-encode it)";
  return out;
}

// Every occurrence of `secret` in `text` (leftmost, not overlapping) as
// "****". Knuth-Morris-Pratt: linear in both lengths whatever the bytes, where
// a naive search of a long secret in a long text is quadratic.
std::string ReplaceAll(const std::string& text, const std::string& secret) {
  std::vector<size_t> fallback(secret.size(), 0);
  for (size_t i = 1, k = 0; i < secret.size(); ++i) {
    while (k > 0 && secret[i] != secret[k]) k = fallback[k - 1];
    if (secret[i] == secret[k]) ++k;
    fallback[i] = k;
  }
  std::string out;
  size_t copied = 0;
  for (size_t i = 0, k = 0; i < text.size(); ++i) {
    while (k > 0 && text[i] != secret[k]) k = fallback[k - 1];
    if (text[i] == secret[k]) ++k;
    if (k == secret.size()) {
      size_t start = i + 1 - secret.size();
      out.append(text, copied, start - copied);
      out += kMask;
      copied = i + 1;
      k = 0;
    }
  }
  if (copied == 0) return text;
  out.append(text, copied, std::string::npos);
  return out;
}

}  // namespace

bool IsSecretOption(std::string_view keyword) {
  std::string lower;
  lower.reserve(keyword.size());
  for (char c : keyword) lower.push_back(Lower(c));
  for (const char* part : {"password", "secret", "token", "passphrase"}) {
    if (lower.find(part) != std::string::npos) return true;
  }
  return false;
}

DsnSecrets::DsnSecrets(const std::string& dsn) {
  std::vector<std::string> found;
  if (LibpqOptions options = ParseLibpqOptions(dsn)) {
    for (PQconninfoOption* option = options.get(); option->keyword; ++option) {
      if (option->val && IsSecretOption(option->keyword)) found.emplace_back(option->val);
    }
  }
  size_t prefix = UriPrefixLength(dsn);
  if (prefix > 0) {
    UriParts parts = SplitUri(dsn, prefix);
    std::string_view password = UriPassword(parts.location);
    found.emplace_back(password);
    found.push_back(PercentDecode(password));
    if (CredentialsMisread(parts.location)) {
      // libpq cuts the password where it finds '/', '@', ':' or ',' and
      // shows the pieces as port, host or database name.
      size_t start = 0;
      for (size_t i = 0; i <= password.size(); ++i) {
        if (i == password.size() || std::string_view("/@:,[]").find(password[i]) != std::string_view::npos) {
          found.emplace_back(password.substr(start, i - start));
          found.push_back(PercentDecode(password.substr(start, i - start)));
          start = i + 1;
        }
      }
    }
  }
  AddKeyedValues(dsn, prefix > 0, found);
  found.erase(std::remove(found.begin(), found.end(), std::string()), found.end());
  std::sort(found.begin(), found.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() > b.size() : a < b;
  });
  found.erase(std::unique(found.begin(), found.end()), found.end());
  secrets_ = std::move(found);
}

std::string DsnSecrets::Scrub(std::string_view message) const {
  if (secrets_.size() > kMaxSecrets) return kWithheld;
  std::string out(message);
  for (const auto& secret : secrets_) out = ReplaceAll(out, secret);
  return out;
}

std::string ScrubDsnSecrets(std::string_view message, const std::string& dsn) {
  return DsnSecrets(dsn).Scrub(message);
}

std::string MaskDsn(const std::string& dsn) {
  LibpqOptions options = ParseLibpqOptions(dsn);
  if (!options) return kUnparsable;
  DsnSecrets secrets(dsn);
  size_t prefix = UriPrefixLength(dsn);
  if (prefix > 0) {
    UriParts parts = SplitUri(dsn, prefix);
    if (CredentialsMisread(parts.location)) return secrets.Scrub(MaskMisreadUri(parts));
  }
  // Where first, then who, then the rest in libpq's order.
  std::vector<const PQconninfoOption*> shown;
  for (std::string_view key : {"host", "hostaddr", "port", "dbname", "user"}) {
    for (PQconninfoOption* option = options.get(); option->keyword; ++option) {
      if (option->val && key == option->keyword) shown.push_back(option);
    }
  }
  for (PQconninfoOption* option = options.get(); option->keyword; ++option) {
    if (option->val && std::find(shown.begin(), shown.end(), option) == shown.end()) {
      shown.push_back(option);
    }
  }
  std::string out;
  for (const PQconninfoOption* option : shown) {
    if (!out.empty()) out += " ";
    out += option->keyword;
    out += "=";
    out += IsSecretOption(option->keyword) ? std::string(kMask) : DisplayValue(option->val);
  }
  if (out.empty()) return "(libpq defaults)";
  // A secret can also sit inside another value (options='-c x.password=...').
  return secrets.Scrub(out);
}

}  // namespace seatwatch::db
