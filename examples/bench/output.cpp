#include "bench/output.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "bench/json.hpp"
#include "bench/session.hpp"

namespace bench {

bool write_file(const std::string& dir, const std::string& name, const std::string& text) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "%s: cannot create %s: %s\n", program_name(), dir.c_str(), std::strerror(errno));
    return false;
  }
  const std::string path = dir + "/" + name;
  std::ofstream f(path);
  f << text;
  f.close();
  if (!f) {
    std::fprintf(stderr, "%s: cannot write %s\n", program_name(), path.c_str());
    return false;
  }
  return true;
}

std::string json_document(const Record& members) {
  std::string o = "{\n";
  for (size_t i = 0; i < members.size(); ++i) {
    o += "  " + json_str(members[i].first) + ": " + members[i].second.json();
    o += i + 1 < members.size() ? ",\n" : "\n";
  }
  return o + "}\n";
}

}  // namespace bench
