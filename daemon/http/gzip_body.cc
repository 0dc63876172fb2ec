#include "http/gzip_body.h"

namespace seatwatch::http {

GzipBody EncodeGzip(const std::vector<std::shared_ptr<const std::string>>& parts,
                    GzipPartCache& cache) {
  static const auto header = std::make_shared<const std::string>(GzipHeader());
  GzipBody body;
  body.pieces.reserve(parts.size() + 2);
  body.pieces.push_back(header);
  std::uint32_t crc = 0;
  std::uint64_t length = 0;
  for (const auto& part : parts) {
    if (part->empty()) continue;
    auto deflated = cache.Get(part);
    crc = CombineCrc(crc, deflated->crc, deflated->length);
    length += deflated->length;
    // Aliased to the cache entry's bytes: kept alive by this body even if the
    // part dies meanwhile.
    body.pieces.emplace_back(deflated, &deflated->bytes);
  }
  body.pieces.push_back(std::make_shared<const std::string>(GzipTrailer(crc, length)));
  for (const auto& piece : body.pieces) body.length += piece->size();
  return body;
}

}  // namespace seatwatch::http
