#include "config/describe.h"

#include "config/validate.h"
#include "db/conninfo.h"
#include "db/dsn_mask.h"
#include "http/tls_credentials.h"
#include "http/tls_validity.h"
#include "util/duration.h"

namespace seatwatch::config {

namespace {

// The target_session_attrs a read-only lane's session built from `dsn` asks
// libpq for: read-write goes as primary, read-only as standby (see
// db::BuildConninfo).
std::string ReadOnlySessionAttrs(const std::string& dsn, const DatabaseConfig& database) {
  db::SessionSettings settings;
  settings.application_name = database.application_name;
  settings.read_only = true;
  try {
    return TargetSessionAttrs(db::BuildConninfo(dsn, settings));
  } catch (const std::exception&) {
    return TargetSessionAttrs(dsn);
  }
}

}  // namespace

std::vector<std::string> DescribeIncremental(const Config& config) {
  std::vector<std::string> lines;
  bool any = false;
  for (const auto& query : config.queries) any = any || query.AsksIncremental();
  const ChangesConfig& changes = config.changes;
  if (changes.enabled) {
    lines.push_back("changes: enabled, dsn " + db::MaskDsn(config.ChangesDsn()) +
                    (changes.dsn.empty() ? " (that of [database])" : "") + ", publication " +
                    changes.publication + ", interval " + util::FormatDuration(changes.interval) +
                    ", rechecks at most " + util::FormatDuration(changes.recheck_time_per_minute) +
                    " a minute, full pass every " +
                    util::FormatDuration(changes.full_pass_interval));
  } else if (any) {
    lines.push_back("changes: enabled = false: incremental entries run full passes at their interval");
  }
  for (const auto& query : config.queries) {
    if (!query.not_incremental.empty()) {
      lines.push_back("invariant " + query.name + ": full passes only (" + query.not_incremental + ")");
      continue;
    }
    if (!query.AsksIncremental()) continue;
    std::string tables;
    for (const auto& [table, column] : query.tables) {
      tables += (tables.empty() ? "" : ", ") + table + "." + column;
    }
    const char* section = query.kind == QueryConfig::Kind::kInvariant ? "invariant" : "metric";
    lines.push_back(std::string(section) + " " + query.name + ": incremental (key " + query.key +
                    "; tables " + tables + "; scoped_sql " + (query.compiled ? std::string("compiled") : query.scoped_sql_path) +
                    (query.expiry_column.empty() ? "" : "; expiry_column " + query.expiry_column) + ")");
  }
  return lines;
}

std::vector<std::string> DescribeLanes(const Config& config) {
  std::vector<std::string> lines;
  lines.push_back("checks lane: " + db::MaskDsn(config.ChecksDsn()) +
                  (config.checks.dsn.empty() ? " (that of [database]; set [checks] dsn to read a standby)"
                                             : " (may be a standby)"));
  lines.push_back("locks lane, cleanup: " + db::MaskDsn(config.database.dsn) + " (needs the primary)");
  return lines;
}

std::vector<std::string> LaneWarnings(const Config& config) {
  std::vector<std::string> lines;
  auto warn = [&lines](const std::string& table, const std::string& attrs, const std::string& why) {
    lines.push_back("warning: [" + table + "] dsn has target_session_attrs=" + attrs + ": " + why);
  };
  // Judged as the checks lane's read-only session asks libpq for it, named
  // as written.
  if (!config.checks.dsn.empty() &&
      ReadOnlySessionAttrs(config.checks.dsn, config.database) == "primary") {
    warn("checks", TargetSessionAttrs(config.checks.dsn), "the checks lane will never use a standby");
  }
  // The cleanup's session is no read-only one: it asks for what is written.
  std::string written = TargetSessionAttrs(config.database.dsn);
  if (written == "standby" || written == "read-only" || written == "prefer-standby") {
    warn("database", written, "the cleanup and the change feed need the primary");
  }
  return lines;
}

std::string DescribeHttp(const Config& config) {
  const HttpConfig& http = config.http;
  std::string line = "http: " + http.listen;
  if (http.tls()) {
    line += std::string(" over HTTPS (TLS ") +
            (http.tls_min_version == HttpConfig::TlsVersion::kTls13 ? "1.3" : "1.2") + " and later";
    try {
      auto tls = http::ParseTlsCredentials(http.tls_cert_pem, http.tls_key_pem, http.tls_client_ca_pem);
      line += ", certificate serial " + tls->serial() + " " + tls->subject() + " until " + tls->not_after();
    } catch (const std::exception& e) {
      line += std::string(", certificate not loaded: ") + e.what();
    }
    if (!http.tls_client_ca_file.empty()) line += ", client certificates required";
    line += ")";
  } else {
    line += " over plain HTTP";
  }
  size_t users = http.basic_auth_users.size();
  if (users == 0) {
    line += ", no authentication";
  } else {
    line += ", basic auth: " + std::to_string(users) + (users == 1 ? " user" : " users") +
            (http.auth_exempt_probes ? " (/healthz and /readyz exempt)" : " (every path)");
  }
  return line;
}

std::vector<std::string> HttpWarnings(const Config& config, int64_t now) {
  const HttpConfig& http = config.http;
  std::vector<std::string> lines;
  if (!http.tls()) return lines;
  try {
    auto tls = http::ParseTlsCredentials(http.tls_cert_pem, http.tls_key_pem, http.tls_client_ca_pem);
    if (http::ExpiresSoon(tls->validity(), now)) {
      lines.push_back("warning: http.tls_cert_file: " + http.tls_cert_file + " expires at " +
                      http::UtcText(tls->validity().not_after) + ", in " +
                      http::TimeLeftText(tls->validity(), now) +
                      ": renew it, then send SIGHUP (every scrape fails once it has expired)");
    }
  } catch (const std::exception&) {
    // DescribeHttp says why the certificate did not load.
  }
  return lines;
}

}  // namespace seatwatch::config
