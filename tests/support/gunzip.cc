#include "support/gunzip.h"

#include <zlib.h>

#include <stdexcept>

namespace seatwatch::testing {

std::string Gunzip(const std::string& member) {
  z_stream stream{};
  if (inflateInit2(&stream, 16 + 15) != Z_OK) throw std::runtime_error("inflateInit2 failed");
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(member.data()));
  stream.avail_in = static_cast<uInt>(member.size());
  std::string out;
  char buffer[65536];
  int status = Z_OK;
  while (status == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof buffer;
    status = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - stream.avail_out);
  }
  std::string why = stream.msg ? stream.msg : "status " + std::to_string(status);
  size_t left = stream.avail_in;
  inflateEnd(&stream);
  if (status != Z_STREAM_END) throw std::runtime_error("gunzip: " + why);
  if (left != 0) {
    throw std::runtime_error("gunzip: " + std::to_string(left) + " bytes after the member");
  }
  return out;
}

}  // namespace seatwatch::testing
