// Accept-Encoding as clients send it.
#include <gtest/gtest.h>

#include <initializer_list>

#include "http/gzip_accept.h"

namespace seatwatch {
namespace {

using http::AcceptsGzip;

void ExpectAccepted(std::initializer_list<const char*> headers) {
  for (const char* header : headers) EXPECT_TRUE(AcceptsGzip(header)) << '"' << header << '"';
}

void ExpectRefused(std::initializer_list<const char*> headers) {
  for (const char* header : headers) EXPECT_FALSE(AcceptsGzip(header)) << '"' << header << '"';
}

TEST(GzipAcceptTest, WhatRealClientsSend) {
  ExpectAccepted({"gzip",               // Prometheus
                  "deflate, gzip",      // curl --compressed
                  "gzip, deflate, br",  // browsers
                  "gzip, deflate, br, zstd"});
  ExpectRefused({"", "identity", "br, deflate"});
}

TEST(GzipAcceptTest, NamesAreCaseInsensitiveAndXGzipIsGzip) {
  ExpectAccepted({"GZIP", "GZip;Q=0.5", "x-gzip", "X-GZIP"});
  ExpectRefused({"gzipx", "x-gzip2"});
}

TEST(GzipAcceptTest, QValues) {
  ExpectAccepted({"gzip;q=1", "gzip;q=1.000", "gzip;q=0.001", "gzip ; q = 0.5 , identity",
                  "gzip;level=1"});  // the last: a parameter that is not q
  ExpectRefused({"gzip;q=0", "gzip;q=0.0", "gzip;q=0.000", "identity, gzip;q=0"});
}

TEST(GzipAcceptTest, UnparsableQValueIgnoresTheElement) {
  ExpectRefused({"gzip;q=abc", "gzip;q=2", "gzip;q=1.5", "gzip;q=0.0001", "gzip;q="});
  ExpectAccepted({"gzip;q=abc, x-gzip"});
}

TEST(GzipAcceptTest, Star) {
  ExpectAccepted({"*", "br, *;q=0.1"});
  ExpectRefused({"*;q=0"});
  // An explicit refusal of gzip wins over the wildcard.
  ExpectRefused({"gzip;q=0, *", "*, gzip;q=0"});
  // And an explicit gzip over a refused wildcard.
  ExpectAccepted({"*;q=0, gzip"});
}

TEST(GzipAcceptTest, EmptyElementsAndWhitespace) {
  ExpectAccepted({" , ,gzip,", "\tgzip\t"});
  ExpectRefused({",,,"});
}

}  // namespace
}  // namespace seatwatch
