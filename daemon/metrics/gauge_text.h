#pragma once

#include <string>

#include "db/rows.h"
#include "metrics/row_mapping.h"

namespace seatwatch::metrics {

// One gauge family straight from query rows to the text exposition format,
// without building a prometheus::MetricFamily: at 5M seats the inventory is
// 35,000 samples, and as ClientMetric objects they would cost about 12 MB
// and a copy per poll for text that is all /metrics ever needs. Same rows,
// same rules (NULL value skipped, NULL label empty) and byte for byte the
// same text as RenderText({family of RowsToGauges}); no text at all when no
// row has a value. Throws std::invalid_argument for a value that is not a
// number, like RowsToGauges.
std::string RowsToGaugeText(const std::string& name, const std::string& help,
                            const db::Rows& rows, const ColumnBinding& binding);

}  // namespace seatwatch::metrics
