#include "http/gzip_member.h"

#include <zlib.h>

#include <stdexcept>

namespace seatwatch::http {

namespace {

// Raw deflate (negative window bits: no zlib header or trailer), the largest
// window, zlib's default memory level.
constexpr int kRawWindowBits = -15;
constexpr int kMemLevel = 8;

// One raw deflate stream over `text`, ended with `flush`.
std::string RawDeflate(std::string_view text, int level, int flush) {
  z_stream stream{};
  if (deflateInit2(&stream, level, Z_DEFLATED, kRawWindowBits, kMemLevel, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw std::runtime_error("gzip: deflateInit2 failed");
  }
  std::string out;
  // deflateBound covers Z_FINISH; a sync flush adds at most a 5-byte empty
  // stored block, and the loop below grows the buffer should zlib need more.
  out.resize(deflateBound(&stream, static_cast<uLong>(text.size())) + 16);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  size_t produced = 0;
  int status = Z_OK;
  for (;;) {
    stream.next_out = reinterpret_cast<Bytef*>(&out[produced]);
    stream.avail_out = static_cast<uInt>(out.size() - produced);
    status = deflate(&stream, flush);
    produced = out.size() - stream.avail_out;
    bool done = flush == Z_FINISH ? status == Z_STREAM_END
                                  : (status == Z_OK && stream.avail_in == 0 &&
                                     stream.avail_out != 0);
    if (done) break;
    if (status != Z_OK && status != Z_BUF_ERROR) break;
    out.resize(out.size() * 2);
  }
  deflateEnd(&stream);
  if (flush == Z_FINISH ? status != Z_STREAM_END : status != Z_OK) {
    throw std::runtime_error("gzip: deflate failed");
  }
  out.resize(produced);
  return out;
}

// A final, empty block (what Z_FINISH on an empty raw stream gives: a fixed
// Huffman block holding only end-of-block, 0x03 0x00).
const std::string& FinalBlock() {
  static const std::string block = RawDeflate({}, Z_DEFAULT_COMPRESSION, Z_FINISH);
  return block;
}

void PutLittleEndian32(std::string& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

}  // namespace

DeflatedPart DeflatePart(std::string_view text, int level) {
  DeflatedPart part;
  part.length = text.size();
  if (text.empty()) return part;
  // zlib's sizes are 32-bit: a text beyond that is not a metrics body.
  if (text.size() > 0xffffffffu) throw std::runtime_error("gzip: part too large");
  part.bytes = RawDeflate(text, level, Z_SYNC_FLUSH);
  part.crc = static_cast<std::uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(text.data()), static_cast<uInt>(text.size())));
  return part;
}

const std::string& GzipHeader() {
  // ID1 ID2, CM=8 (deflate), FLG=0, MTIME=0 (4 bytes), XFL=0, OS=255.
  static const std::string header("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff", 10);
  return header;
}

std::string GzipTrailer(std::uint32_t crc, std::uint64_t length) {
  std::string out = FinalBlock();
  PutLittleEndian32(out, crc);
  PutLittleEndian32(out, static_cast<std::uint32_t>(length & 0xffffffffu));
  return out;
}

std::uint32_t CombineCrc(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t length_b) {
  return static_cast<std::uint32_t>(
      crc32_combine(crc_a, crc_b, static_cast<z_off_t>(length_b)));
}

}  // namespace seatwatch::http
