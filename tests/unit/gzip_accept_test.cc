// Accept-Encoding as clients send it.
#include <gtest/gtest.h>

#include "http/gzip_accept.h"

namespace seatwatch {
namespace {

using http::AcceptsGzip;

TEST(GzipAcceptTest, WhatRealClientsSend) {
  EXPECT_TRUE(AcceptsGzip("gzip"));                         // Prometheus
  EXPECT_TRUE(AcceptsGzip("deflate, gzip"));                // curl --compressed
  EXPECT_TRUE(AcceptsGzip("gzip, deflate, br"));            // browsers
  EXPECT_TRUE(AcceptsGzip("gzip, deflate, br, zstd"));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip("br, deflate"));
}

TEST(GzipAcceptTest, NamesAreCaseInsensitiveAndXGzipIsGzip) {
  EXPECT_TRUE(AcceptsGzip("GZIP"));
  EXPECT_TRUE(AcceptsGzip("GZip;Q=0.5"));
  EXPECT_TRUE(AcceptsGzip("x-gzip"));
  EXPECT_TRUE(AcceptsGzip("X-GZIP"));
  EXPECT_FALSE(AcceptsGzip("gzipx"));
  EXPECT_FALSE(AcceptsGzip("x-gzip2"));
}

TEST(GzipAcceptTest, QValues) {
  EXPECT_TRUE(AcceptsGzip("gzip;q=1"));
  EXPECT_TRUE(AcceptsGzip("gzip;q=1.000"));
  EXPECT_TRUE(AcceptsGzip("gzip;q=0.001"));
  EXPECT_TRUE(AcceptsGzip("gzip ; q = 0.5 , identity"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0.0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0.000"));
  EXPECT_FALSE(AcceptsGzip("identity, gzip;q=0"));
  EXPECT_TRUE(AcceptsGzip("gzip;level=1"));  // a parameter that is not q
}

TEST(GzipAcceptTest, UnparsableQValueIgnoresTheElement) {
  EXPECT_FALSE(AcceptsGzip("gzip;q=abc"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=2"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=1.5"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0.0001"));
  EXPECT_FALSE(AcceptsGzip("gzip;q="));
  EXPECT_TRUE(AcceptsGzip("gzip;q=abc, x-gzip"));
}

TEST(GzipAcceptTest, Star) {
  EXPECT_TRUE(AcceptsGzip("*"));
  EXPECT_TRUE(AcceptsGzip("br, *;q=0.1"));
  EXPECT_FALSE(AcceptsGzip("*;q=0"));
  // An explicit refusal of gzip wins over the wildcard.
  EXPECT_FALSE(AcceptsGzip("gzip;q=0, *"));
  EXPECT_FALSE(AcceptsGzip("*, gzip;q=0"));
  // And an explicit gzip over a refused wildcard.
  EXPECT_TRUE(AcceptsGzip("*;q=0, gzip"));
}

TEST(GzipAcceptTest, EmptyElementsAndWhitespace) {
  EXPECT_TRUE(AcceptsGzip(" , ,gzip,"));
  EXPECT_TRUE(AcceptsGzip("\tgzip\t"));
  EXPECT_FALSE(AcceptsGzip(",,,"));
}

}  // namespace
}  // namespace seatwatch
