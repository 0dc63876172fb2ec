#pragma once

#include <string>

#include "db/rows.h"
#include "metrics/row_mapping.h"

namespace seatwatch::metrics {

// One gauge family straight from query rows to the text exposition format,
// without building a prometheus::MetricFamily: at 5M seats the inventory is
// 35,000 samples, and as ClientMetric objects they would cost about 12 MB
// and a copy per poll for text that is all /metrics ever needs. One sample
// per row, labels in the order of `binding`; a row whose value is NULL is
// not this entry's (that is how one query feeds several entries) and is
// skipped; a NULL label value is empty. Byte for byte the text prometheus-
// cpp's serializer writes for such a family (whose help was escaped as
// GaugeFamily does, and whose label values are UTF-8); no text at all when
// no row has a value. Throws db::DataError: bad_value for a value that is
// not a number, duplicate_series for two rows with one label set.
std::string RowsToGaugeText(const std::string& name, const std::string& help,
                            const db::Rows& rows, const ColumnBinding& binding);

// RowsToGaugeText in pieces, for a family built in parts (KeyedTextParts):
// the HELP and TYPE lines it writes before the first sample, and the
// samples alone, appended to `out` (throwing as it does, for duplicates
// among `rows` only).
std::string GaugeHeader(const std::string& name, const std::string& help);
void AppendGaugeSamples(std::string& out, const std::string& name, const db::Rows& rows,
                        const ColumnBinding& binding);

}  // namespace seatwatch::metrics
