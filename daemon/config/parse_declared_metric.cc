// [[metric]] entries with `kind`: counts per key on the user's own tables,
// declared, riding on a check's pass. Parsed here into
// declare::MetricDeclaration; every error names the file, line and key.
#include "config/declared_fields.h"
#include "config/names.h"
#include "config/sections.h"

namespace seatwatch::config {

namespace {

// Keys of a hand-written [[metric]]: a declared one has its SQL written.
const std::vector<std::string> kHandWrittenKeys = {"sql",    "value",      "params",
                                                   "tables", "scoped_sql", "expiry_column"};

declare::Tally ParseTally(const toml::table& item, size_t index, TableReader& parent,
                          DeclaredMetric& entry) {
  TableReader reader(item, parent.file(), parent.Qualified("counts"));
  const std::string field = "counts." + std::to_string(index);
  RecordKeys(reader, field, {"name"}, entry);
  declare::Tally tally;
  auto name = reader.String("name");
  if (!name) Fail(reader.TableWhere(), reader.Qualified("name"), "is required: the count's label value");
  const Location& where = entry.FieldLocation(field + ".name");
  RequireLength(where, reader.Qualified("name"), *name, kMaxColumnLength);
  if (name->empty() || HasControlCharacter(*name)) {
    Fail(where, reader.Qualified("name"), "must be a non-empty label value without control characters");
  }
  tally.name = *name;
  tally.rows = ReadRowSet(reader, field, {"table", "columns", "where", "sum", "expires"}, entry);
  if (tally.rows.columns.empty()) tally.rows.columns = entry.metric.key;
  return tally;
}

void ParseTallies(TableReader& reader, DeclaredMetric& entry) {
  const toml::node* node = reader.Find("counts");
  if (!node) Fail(entry.where, reader.Qualified("counts"), "is required: the counts, { name, table, where? } each");
  const toml::array* array = node->as_array();
  if (!array || !array->is_array_of_tables()) {
    Fail(reader.Where(*node), reader.Qualified("counts"),
         "must be a list of tables { name, table, columns?, where?, sum?, expires? } (or "
         "[[metric.counts]] tables below the entry)");
  }
  for (size_t i = 0; i < array->size(); ++i) {
    entry.metric.tallies.push_back(ParseTally(*array->get(i)->as_table(), i, reader, entry));
  }
}

}  // namespace

DeclaredMetric ParseDeclaredMetric(TableReader& reader) {
  DeclaredMetric entry;
  entry.where = reader.TableWhere();
  RecordKeys(reader, "",
             {"kind", "name", "check", "help", "key", "labels", "label", "counts", "interval",
              "max_rows"},
             entry);
  entry.kind = *reader.Choice("kind");
  for (const auto& key : kHandWrittenKeys) {
    if (const toml::node* node = reader.Peek(key)) {
      Fail(reader.Where(*node), reader.Qualified(key),
           "is not taken by a metric with kind: seatwatch writes its SQL (drop kind to write it "
           "yourself)");
    }
  }
  declare::MetricDeclaration& m = entry.metric;
  m.name = ParseNameCheckHelp(reader, entry);
  ParseKey(reader, entry, m.key, m.labels);
  if (auto label = reader.String("label")) {
    const Location& where = entry.FieldLocation("label");
    RequireLength(where, reader.Qualified("label"), *label, kMaxColumnLength);
    if (!IsLabelName(*label) || label->rfind("seatwatch_", 0) == 0 || *label == "invariant") {
      Fail(where, reader.Qualified("label"),
           Printable(*label) + " is not a valid Prometheus label name (nor may it start with "
           "seatwatch_ or be \"invariant\")");
    }
    m.label = *label;
  }
  entry.interval = reader.Duration("interval");
  if (auto v = reader.Integer("max_rows")) entry.max_rows = static_cast<int>(*v);
  ParseTallies(reader, entry);
  reader.RejectUnknownKeys();
  try {
    declare::ValidateMetric(m);
  } catch (const declare::DeclarationError& e) {
    Fail(entry.FieldLocation(e.field()), reader.Qualified(e.field()), e.what());
  }
  return entry;
}

}  // namespace seatwatch::config
