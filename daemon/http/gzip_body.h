#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "http/gzip_cache.h"

namespace seatwatch::http {

// A body as one gzip member, in pieces written in order: the header, each
// part's cached deflated bytes (shared, not copied), the trailer.
struct GzipBody {
  std::vector<std::shared_ptr<const std::string>> pieces;
  std::size_t length = 0;  // the sum of the pieces' sizes: Content-Length
};

// Encodes `parts` (the response's body in order) through `cache`. Throws
// what DeflatePart throws.
GzipBody EncodeGzip(const std::vector<std::shared_ptr<const std::string>>& parts,
                    GzipPartCache& cache);

}  // namespace seatwatch::http
