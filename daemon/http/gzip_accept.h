#pragma once

#include <string_view>

namespace seatwatch::http {

// Whether a request's Accept-Encoding value (RFC 9110 12.5.3) allows a gzip
// response: "gzip" or "x-gzip" with a q-value above 0, or else "*" with one;
// an explicit "gzip;q=0" refuses it even beside "*". Names and the q
// parameter are case-insensitive; an element whose q-value does not parse is
// ignored. An absent or empty header allows identity only (we never guess).
// Pure.
bool AcceptsGzip(std::string_view accept_encoding);

}  // namespace seatwatch::http
