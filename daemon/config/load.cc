#include "config/load.h"

#include <stdexcept>

#include "config/config_error.h"
#include "config/parse.h"
#include "config/read_file.h"
#include "config/validate.h"
#include "http/tls_credentials.h"
#include "http/tls_validity.h"

namespace seatwatch::config {

namespace {

std::string ReadSql(const std::string& path, const Location& where, const std::string& key) {
  std::string text;
  try {
    text = ReadRegularFile(path);
  } catch (const std::runtime_error& e) {
    throw ConfigError(where.Describe(key) + ": cannot read " + path + ": " + e.what());
  }
  std::string sql = TrimSql(std::move(text));
  if (sql.empty()) throw ConfigError(where.Describe(key) + ": " + path + " holds no SQL");
  return sql;
}

std::string ReadHttpFile(const HttpConfig& http, const std::string& path, const std::string& key) {
  try {
    return ReadRegularFile(path);
  } catch (const std::runtime_error& e) {
    throw ConfigError(http.KeyLocation(key).Describe("http." + key) + ": cannot read " + path + ": " + e.what());
  }
}

}  // namespace

void LoadHttpFiles(Config& config) {
  HttpConfig& http = config.http;
  if (!http.tls()) return;
  http.tls_cert_pem = ReadHttpFile(http, http.tls_cert_file, "tls_cert_file");
  http.tls_key_pem = ReadHttpFile(http, http.tls_key_file, "tls_key_file");
  if (!http.tls_client_ca_file.empty()) {
    http.tls_client_ca_pem = ReadHttpFile(http, http.tls_client_ca_file, "tls_client_ca_file");
  }
  // Parsed here as the server will parse them, so --check-config and a
  // reload refuse a key that does not match its certificate, and a
  // certificate that every client would refuse as expired or not yet valid.
  try {
    auto credentials = http::ParseTlsCredentials(http.tls_cert_pem, http.tls_key_pem, http.tls_client_ca_pem);
    std::string problem = http::ValidityProblem(credentials->validity(), http::UnixNowSeconds());
    if (!problem.empty()) {
      throw ConfigError(http.KeyLocation("tls_cert_file").Describe("http.tls_cert_file") + ": " +
                        http.tls_cert_file + " " + problem);
    }
  } catch (const http::TlsCredentialsError& e) {
    using Part = http::TlsCredentialsError::Part;
    std::string key = e.part() == Part::kCertificate ? "tls_cert_file"
                      : e.part() == Part::kKey       ? "tls_key_file"
                                                     : "tls_client_ca_file";
    const std::string& file = e.part() == Part::kCertificate ? http.tls_cert_file
                              : e.part() == Part::kKey       ? http.tls_key_file
                                                             : http.tls_client_ca_file;
    throw ConfigError(http.KeyLocation(key).Describe("http." + key) + ": " + file + " " + e.what());
  }
}

std::string TrimSql(std::string sql) {
  while (!sql.empty()) {
    char last = sql.back();
    if (last == ';' || last == ' ' || last == '\n' || last == '\t' || last == '\r') {
      sql.pop_back();
    } else {
      break;
    }
  }
  return sql;
}

void LoadSqlFiles(Config& config) {
  for (auto& query : config.queries) {
    const char* section = query.kind == QueryConfig::Kind::kInvariant ? "invariant" : "metric";
    if (!query.compiled) {
      query.sql = ReadSql(query.sql_path, query.KeyLocation("sql"), std::string(section) + ".sql");
    }
    for (const auto& [invariant, file] : query.detail_sql_path) {
      std::string key = query.invariant_column.empty() ? "detail_sql" : "detail_sql." + invariant;
      query.detail_sql[invariant] =
          ReadSql(file, query.KeyLocation(key), std::string(section) + "." + key);
    }
    if (!query.scoped_sql_path.empty()) {
      query.scoped_sql = ReadSql(query.scoped_sql_path, query.KeyLocation("scoped_sql"),
                                 std::string(section) + ".scoped_sql");
    }
  }
  if (config.holds.enabled) {
    config.holds.sql = ReadSql(config.holds.sql_path, config.holds.where, "holds.sql");
  }
  if (!config.cleanup.sql_path.empty()) {
    config.cleanup.sql = ReadSql(config.cleanup.sql_path, config.cleanup.where, "cleanup.sql");
  }
  if (!config.cleanup.dry_run_sql_path.empty()) {
    config.cleanup.dry_run_sql =
        ReadSql(config.cleanup.dry_run_sql_path, config.cleanup.where, "cleanup.dry_run_sql");
  }
}

Config LoadConfig(const std::string& path) {
  std::string text;
  try {
    text = ReadRegularFile(path);
  } catch (const std::runtime_error& e) {
    throw ConfigError(path + ": cannot read config file: " + e.what());
  }
  Config config = ParseConfig(text, path);
  RequireChecks(config);
  LoadSqlFiles(config);
  LoadHttpFiles(config);
  return config;
}

}  // namespace seatwatch::config
