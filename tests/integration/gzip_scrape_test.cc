// gzip scrapes of the real daemon against the scratch database: the decoded
// body is the identity body byte for byte, and curl (a real client) decodes
// it into metrics promtool accepts.
#include <gtest/gtest.h>

#include <string>

#include "support/daemon_process.h"
#include "support/daemon_test.h"
#include "support/http_client.h"
#include "support/gunzip.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::HttpExchange;
using testing::HttpResponse;
using testing::Sample;
using testing::WaitFor;

// Everything before the process metrics, which are read from /proc on every
// scrape (CPU seconds, RSS) and so differ from one scrape to the next. They
// are rendered last, after every snapshot part and the cleanup's text.
std::string BeforeProcessMetrics(const std::string& text) {
  auto at = text.find("# HELP process_");
  return at == std::string::npos ? text : text.substr(0, at);
}

bool HasHeader(const std::string& headers, const std::string& line) {
  return ("\r\n" + headers).find("\r\n" + line + "\r\n") != std::string::npos;
}

class GzipScrapeTest : public testing::DaemonTest {
 protected:
  GzipScrapeTest() : DaemonTest("sw_gzip", "seatwatch-gzip") {
    // Enough rows that the body spans several parts of some size.
    db_.Exec("INSERT INTO seats (event_id, seat) SELECT e, 'A' || n "
             "FROM generate_series(1, 200) e, generate_series(1, 5) n");
    UseShippedConfig();
  }

  HttpResponse Scrape(const std::string& accept_encoding) {
    std::string request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n";
    if (!accept_encoding.empty()) request += "Accept-Encoding: " + accept_encoding + "\r\n";
    return HttpExchange(port_, request + "\r\n");
  }
};

TEST_F(GzipScrapeTest, DecodedGzipScrapeEqualsTheIdentityScrape) {
  DaemonProcess daemon({"--config", config_}, {"SEATWATCH_DSN=" + db_.dsn()});
  ASSERT_TRUE(WaitFor([&] {
    return Sample(Scrape("").body, "seatwatch_check_success{check=\"locks\"}") == 1 &&
           Sample(Scrape("").body, "seatwatch_check_success{check=\"event_inventory\"}") == 1;
  }, 30s)) << daemon.Log();

  // The daemon polls every second, so a new snapshot may land between two
  // scrapes. Sandwich the gzip scrape between two identity scrapes: when
  // those agree, no snapshot was published in between, and the gzip scrape
  // served that same snapshot. Retry until a sandwich holds.
  bool compared = false;
  for (int attempt = 0; attempt < 50 && !compared; ++attempt) {
    HttpResponse before = Scrape("");
    HttpResponse gzip = Scrape("gzip");
    HttpResponse after = Scrape("");
    ASSERT_EQ(gzip.status, 200);
    ASSERT_TRUE(HasHeader(gzip.headers, "Content-Encoding: gzip")) << gzip.headers;
    ASSERT_TRUE(HasHeader(gzip.headers, "Vary: Accept-Encoding")) << gzip.headers;
    ASSERT_TRUE(HasHeader(gzip.headers, "Content-Length: " + std::to_string(gzip.body.size())))
        << gzip.headers;
    ASSERT_FALSE(HasHeader(before.headers, "Content-Encoding: gzip")) << before.headers;
    if (BeforeProcessMetrics(before.body) != BeforeProcessMetrics(after.body)) continue;
    std::string decoded = testing::Gunzip(gzip.body);
    EXPECT_EQ(BeforeProcessMetrics(decoded), BeforeProcessMetrics(before.body));
    // The process metrics are there in both, with the same series.
    EXPECT_GT(Sample(decoded, "process_resident_memory_bytes"), 0);
    EXPECT_EQ(Sample(decoded, "process_start_time_seconds"),
              Sample(before.body, "process_start_time_seconds"));
    EXPECT_LT(gzip.body.size(), before.body.size() / 5);
    compared = true;
  }
  EXPECT_TRUE(compared) << "no two identity scrapes in a row saw the same snapshot";
}

TEST_F(GzipScrapeTest, CurlDecodesItAndPromtoolAcceptsTheText) {
  DaemonProcess daemon({"--config", config_}, {"SEATWATCH_DSN=" + db_.dsn()});
  ASSERT_TRUE(WaitFor([&] { return Sample(Scrape("").body, "seatwatch_up") == 1; }, 30s))
      << daemon.Log();
  std::string url = "http://127.0.0.1:" + std::to_string(port_) + "/metrics";
  std::string headers = dir_ + "/headers.txt", body = dir_ + "/metrics.txt";
  std::string output;
  ASSERT_EQ(testing::RunCommand("curl -sS --compressed -D " + headers + " -o " + body + " " + url,
                                &output), 0) << output;
  std::string got_headers = testing::ReadFile(headers);
  EXPECT_NE(got_headers.find("Content-Encoding: gzip\r\n"), std::string::npos) << got_headers;
  std::string text = testing::ReadFile(body);
  EXPECT_EQ(Sample(text, "seatwatch_up"), 1);
  EXPECT_EQ(Sample(text, "seatwatch_event_inventory{event_id=\"200\",kind=\"seats_free\"}"), 5);
  EXPECT_EQ(testing::RunCommand("promtool check metrics < " + body, &output), 0) << output;

  // Without --compressed curl sends no Accept-Encoding: identity.
  ASSERT_EQ(testing::RunCommand("curl -sS -D " + headers + " -o " + body + " " + url, &output), 0);
  got_headers = testing::ReadFile(headers);
  EXPECT_EQ(got_headers.find("Content-Encoding"), std::string::npos) << got_headers;
  EXPECT_EQ(Sample(testing::ReadFile(body), "seatwatch_up"), 1);
}

}  // namespace
}  // namespace seatwatch
