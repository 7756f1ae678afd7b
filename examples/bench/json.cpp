#include "bench/json.hpp"

#include <cmath>
#include <sstream>

#include "bench/format.hpp"

namespace bench {

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      o += fmt("\\u%04x", static_cast<unsigned char>(c));
    } else {
      o += c;
    }
  }
  return o;
}

std::string json_str(const std::string& s) { return "\"" + json_escape(s) + "\""; }

std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  return fmt("%.6g", v);
}

std::string json_target(const std::string& figure, const std::string& measured, const std::string& target,
                        bool met) {
  return "{\"figure\": " + json_str(figure) + ", \"measured\": " + measured + ", \"target\": " + json_str(target) +
         ", \"met\": " + (met ? "true" : "false") + "}";
}

std::string json_summary(const Summary& s) {
  std::ostringstream o;
  o << "{\"count\": " << s.count << ", \"min_ns\": " << json_num(s.min) << ", \"p50_ns\": " << json_num(s.p50)
    << ", \"p90_ns\": " << json_num(s.p90) << ", \"p99_ns\": " << json_num(s.p99)
    << ", \"max_ns\": " << json_num(s.max) << ", \"mean_ns\": " << json_num(s.mean) << "}";
  return o.str();
}

std::string json_machine(const MachineInfo& m) {
  std::ostringstream o;
  o << "{\"date_utc\": " << json_str(m.date_utc) << ", \"cpu_model\": " << json_str(m.cpu_model)
    << ", \"cores_online\": " << m.cores_online << ", \"cores_allowed\": " << m.cores_allowed
    << ", \"kernel\": " << json_str(m.kernel) << ", \"clocksource\": " << json_str(m.clocksource)
    << ", \"compiler\": " << json_str(m.compiler) << "}";
  return o.str();
}

}  // namespace bench
