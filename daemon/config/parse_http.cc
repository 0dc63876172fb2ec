// [http]: the listen address, TLS and Basic auth.
#include "config/names.h"
#include "config/sections.h"
#include "http/bcrypt.h"
#include "http/listen_support.h"

namespace seatwatch::config {

namespace {

// The TLS files and version. A key, client CA or version without a
// certificate is refused rather than ignored: whoever wrote it expects TLS.
void ParseHttpTls(TableReader& reader, HttpConfig& http) {
  for (const char* key : {"tls_cert_file", "tls_key_file", "tls_client_ca_file"}) {
    const toml::node* node = reader.Find(key);
    if (!node) continue;
    Location where = reader.Where(*node);
    std::string value = *reader.Path(key);
    if (value.empty()) Fail(where, reader.Qualified(key), "must not be empty");
    std::string resolved = ResolvePath(reader.file(), value);
    std::string name(key);
    (name == "tls_cert_file"  ? http.tls_cert_file
     : name == "tls_key_file" ? http.tls_key_file
                              : http.tls_client_ca_file) = resolved;
    http.keys[name] = where;
  }
  if (const toml::node* node = reader.Find("tls_min_version")) {
    std::string version = *reader.Choice("tls_min_version");
    http.tls_min_version =
        version == "1.3" ? HttpConfig::TlsVersion::kTls13 : HttpConfig::TlsVersion::kTls12;
    http.keys["tls_min_version"] = reader.Where(*node);
  }
  if (http.tls_cert_file.empty()) {
    for (const char* key : {"tls_key_file", "tls_client_ca_file", "tls_min_version"}) {
      if (http.keys.count(key)) {
        Fail(http.keys[key], reader.Qualified(key),
             "needs http.tls_cert_file: TLS is on only with a certificate");
      }
    }
  } else if (http.tls_key_file.empty()) {
    Fail(http.keys["tls_cert_file"], "http.tls_key_file", "is required with http.tls_cert_file");
  }
}

// [http.basic_auth] users = { name = "$2y$10$..." }: the format of
// Prometheus' web.config.file basic_auth_users.
void ParseBasicAuth(TableReader& reader, HttpConfig& http) {
  const toml::node* node = reader.Find("users");
  reader.RejectUnknownKeys();  // first: "user = ..." is a typo, not a missing key
  if (!node) {
    Fail(reader.TableWhere(), "http.basic_auth.users", "is required in [http.basic_auth]");
  }
  const toml::table* users = node->as_table();
  if (!users) {
    Fail(reader.Where(*node), "http.basic_auth.users",
         "must be a table of user = \"bcrypt hash\", e.g. { prometheus = \"$2y$10$...\" }");
  }
  if (users->empty()) {
    Fail(reader.Where(*node), "http.basic_auth.users", "must name at least one user");
  }
  for (auto&& [name_key, item] : *users) {
    std::string name(name_key.str());
    Location where = LocationOf(reader.file(), name_key.source());
    RequireLength(where, "http.basic_auth.users", name, kMaxNameLength, "a user name");
    // Basic credentials are "user:password": the user ends at the first colon.
    if (name.empty() || name.find(':') != std::string::npos || HasControlCharacter(name)) {
      Fail(where, "http.basic_auth.users",
           Printable(name) +
               " is not a usable user name (not empty, no colon, no control characters)");
    }
    const std::string key = "http.basic_auth.users." + name;
    if (!item.is_string()) Fail(where, key, "must be a string: the user's bcrypt hash");
    std::string hash = *item.value<std::string>();
    if (std::string problem = http::BcryptProblem(hash); !problem.empty()) {
      Fail(where, key, problem);
    }
    http.basic_auth_users[name] = hash;
  }
}

}  // namespace

void ParseHttp(TableReader& reader, HttpConfig& http) {
  if (const toml::node* node = reader.Find("listen")) {
    std::string value = *reader.LimitedString("listen");
    if (!IsListenAddress(value)) {
      Fail(reader.Where(*node), "http.listen", "must be HOST:PORT, e.g. \"127.0.0.1:9646\"");
    }
    if (std::string why = http::ListenUnsupported(value); !why.empty()) {
      Fail(reader.Where(*node), "http.listen", why);
    }
    http.listen = value;
  }
  ParseHttpTls(reader, http);
  if (auto v = reader.Bool("auth_exempt_probes")) http.auth_exempt_probes = *v;
  if (const toml::table* t = reader.Table("basic_auth")) {
    TableReader auth(*t, reader.file(), "http.basic_auth");
    ParseBasicAuth(auth, http);
  }
  reader.RejectUnknownKeys();
}

}  // namespace seatwatch::config
