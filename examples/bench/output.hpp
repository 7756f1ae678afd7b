// The result files a benchmark writes to its --out directory.
#pragma once

#include <string>

#include "bench/table.hpp"

namespace bench {

// Writes `text` to dir/name, creating dir if needed. On failure prints why
// to stderr and returns false.
bool write_file(const std::string& dir, const std::string& name, const std::string& text);

// A result file's JSON: one member per line; members that are lists
// (Table::json) keep their own lines.
std::string json_document(const Record& members);

}  // namespace bench
