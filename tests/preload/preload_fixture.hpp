// Running Debian's own omniORB programs, built without clanorb, with
// libclanorb_preload.so preloaded (CLANORB_PRELOAD_LIB, set by CMake).
#pragma once

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "orb/process.hpp"

namespace clan::preloadtest {

using orbtest::Finished;
using orbtest::Process;
using orbtest::run_to_end;
using namespace std::chrono_literals;

inline const std::string kPreloadLib = CLANORB_PRELOAD_LIB;
inline const std::string kEchoExamples = "/usr/lib/omniorb/examples/echo/";
// What every transport a stock program gets from the preload is called.
inline const std::vector<std::string> kPreloadedTransports = {"clan", "otp", "via"};

// This process's environment without LD_PRELOAD, plus `extra` ("NAME=value").
inline std::vector<std::string> environment_with(std::vector<std::string> extra = {}) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    if (entry.rfind("LD_PRELOAD=", 0) != 0) env.push_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

// The same, with libclanorb_preload.so preloaded.
inline std::vector<std::string> preloaded(std::vector<std::string> extra = {}) {
  extra.push_back("LD_PRELOAD=" + kPreloadLib);
  return environment_with(std::move(extra));
}

// `path`, a program from a Debian package; the test fails naming the package
// if it is not installed.
inline std::string stock_program(const std::string& path, const char* package) {
  INFO(path << " is missing: install the Debian package " << package
            << " (scripts/setup.sh does)");
  REQUIRE(access(path.c_str(), X_OK) == 0);
  return path;
}

// A server's first stdout line if it is a stringified IOR, "" otherwise.
inline std::string first_line_ior(Process& server) {
  auto line = server.read_line(30s);
  return line && line->rfind("IOR:", 0) == 0 ? *line : "";
}

}  // namespace clan::preloadtest
