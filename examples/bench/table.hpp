// A benchmark's results as a table of records: one call writes it as a
// Markdown table (stdout), CSV or a JSON list of objects, so that no program
// writes its own CSV or JSON by hand.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace bench {

// One cell: empty (blank in Markdown and CSV, null in JSON), text, a number
// printed in its own format (JSON gets "%.6g"), or a JSON value (an object
// or a list) that Markdown and CSV show as its text.
class Value {
 public:
  Value() = default;
  // Implicit, so that a row reads as {"via_pio", size, p50}.
  Value(const char* s) : kind_(Kind::kText), text_(s) {}
  Value(std::string s) : kind_(Kind::kText), text_(std::move(s)) {}
  Value(double v, const char* format = "%.6g");
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Value(T v) : kind_(Kind::kRaw), text_(std::to_string(v)), json_(text_) {}
  static Value boolean(bool b);
  static Value json(std::string raw);

  bool empty() const { return kind_ == Kind::kEmpty; }
  const std::string& text() const { return text_; }
  std::string json() const;

 private:
  enum class Kind { kEmpty, kText, kRaw };
  Kind kind_ = Kind::kEmpty;
  std::string text_;  // Markdown and CSV
  std::string json_;  // kRaw only
};

// Named values in order: a JSON object, one row of a table.
using Record = std::vector<std::pair<std::string, Value>>;

// {"a": 1, "b": "x"} on one line.
std::string json_object(const Record& r);

struct Column {
  Column(std::string k, std::string h = "", bool r = true) : key(std::move(k)), heading(std::move(h)), right(r) {}
  std::string key;      // CSV header and JSON field
  std::string heading;  // Markdown header; the key if empty
  bool right = true;    // Markdown alignment (numbers right, text left)
};

class Table {
 public:
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

  // Appends a row; values beyond the columns are an error in the caller,
  // fewer leave the rest empty.
  void add(std::vector<Value> row);
  size_t rows() const { return rows_.size(); }

  std::string markdown() const;
  std::string csv() const;
  // A JSON list, one object per row and line, each line indented by
  // `indent` spaces (the closing bracket by indent - 2).
  std::string json(int indent = 4) const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<Value>> rows_;
};

}  // namespace bench
