#include "bench/table.hpp"

#include "bench/format.hpp"
#include "bench/json.hpp"

namespace bench {

Value::Value(double v, const char* format) : kind_(Kind::kRaw), text_(fmt(format, v)), json_(json_num(v)) {}

Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::kRaw;
  v.text_ = v.json_ = b ? "true" : "false";
  return v;
}

Value Value::json(std::string raw) {
  Value v;
  v.kind_ = Kind::kRaw;
  v.text_ = raw;
  v.json_ = std::move(raw);
  return v;
}

std::string Value::json() const {
  switch (kind_) {
    case Kind::kEmpty:
      return "null";
    case Kind::kText:
      return json_str(text_);
    case Kind::kRaw:
      return json_;
  }
  return "null";
}

std::string json_object(const Record& r) {
  std::string o = "{";
  for (size_t i = 0; i < r.size(); ++i) {
    o += (i ? ", " : "") + json_str(r[i].first) + ": " + r[i].second.json();
  }
  return o + "}";
}

void Table::add(std::vector<Value> row) {
  row.resize(columns_.size());
  rows_.push_back(std::move(row));
}

namespace {

// " text |", or " |" for an empty cell.
std::string markdown_cell(const std::string& text) { return text.empty() ? " |" : " " + text + " |"; }

}  // namespace

std::string Table::markdown() const {
  std::string head = "|", rule = "|";
  for (const Column& c : columns_) {
    head += markdown_cell(c.heading.empty() ? c.key : c.heading);
    rule += c.right ? "---:|" : "---|";
  }
  std::string o = head + "\n" + rule + "\n";
  for (const auto& row : rows_) {
    o += "|";
    for (const Value& v : row) o += markdown_cell(v.text());
    o += "\n";
  }
  return o;
}

namespace {

// RFC 4180: a field with a comma, a quote or a line break is quoted.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

}  // namespace

std::string Table::csv() const {
  std::string o;
  for (size_t i = 0; i < columns_.size(); ++i) o += (i ? "," : "") + csv_field(columns_[i].key);
  o += "\n";
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) o += (i ? "," : "") + csv_field(row[i].text());
    o += "\n";
  }
  return o;
}

std::string Table::json(int indent) const {
  const std::string pad(static_cast<size_t>(indent), ' ');
  const std::string close(static_cast<size_t>(indent > 2 ? indent - 2 : 0), ' ');
  std::string o = "[\n";
  for (size_t r = 0; r < rows_.size(); ++r) {
    Record rec;
    for (size_t i = 0; i < columns_.size(); ++i) rec.emplace_back(columns_[i].key, rows_[r][i]);
    o += pad + json_object(rec) + (r + 1 < rows_.size() ? ",\n" : "\n");
  }
  return o + close + "]";
}

}  // namespace bench
