#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace seatwatch::http {

// One part of a body deflated on its own, so that parts deflated at
// different times (a part lives across snapshots while its check does not
// change it) can be joined into one gzip member without deflating the whole
// body again: pigz's scheme. The bytes are a raw deflate stream (no zlib or
// gzip framing) ended by a sync flush, so every block is non-final and the
// stream ends byte-aligned: the next part's blocks follow directly. Each part
// uses no back-reference into another part, which costs a little ratio at the
// seams and nothing else.
struct DeflatedPart {
  std::string bytes;
  std::uint32_t crc = 0;      // CRC-32 of the uncompressed part
  std::uint64_t length = 0;   // uncompressed bytes
};

// The zlib level of the parts. On 2.3 MB of inventory series like a 5M-seat
// scrape's (zlib 1.2.13, one core): level 1 gives 7.8% of the text in 6 ms,
// 6 (zlib's default) 6.0% in 24 ms, 9 5.2% in 138 ms. 6 is well under a
// tenth and costs a fraction of what the peers spend per scrape; 9 would
// cost more than a sql_exporter scrape's budget for 13% fewer bytes.
constexpr int kGzipLevel = 6;

// Deflates `text` as above. Throws std::runtime_error if zlib fails (only
// out of memory). An empty text gives empty bytes: it adds nothing.
DeflatedPart DeflatePart(std::string_view text, int level = kGzipLevel);

// The fixed 10-byte member header (RFC 1952): deflate, no name, no mtime
// (so the same body always gives the same bytes), OS unknown.
const std::string& GzipHeader();

// What ends the member: a final empty deflate block, the CRC-32 of the
// whole uncompressed body and its length mod 2^32, both little-endian.
std::string GzipTrailer(std::uint32_t crc, std::uint64_t length);

// The CRC-32 of A followed by B from crc(A), crc(B) and B's length.
std::uint32_t CombineCrc(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t length_b);

}  // namespace seatwatch::http
