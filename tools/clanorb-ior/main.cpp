// clanorb-ior: decodes a stringified IOR, clanorb's tagged components
// included (catior shows them as unknown tags). See usage().
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "tools/clanorb-ior/ior_report.hpp"
#include "tools/clanorb-ior/ior_structure.hpp"
#include "tools/clanorb-ior/ior_text.hpp"

namespace {

constexpr int kBadIor = 1;    // the input is not a well-formed IOR
constexpr int kBadUsage = 2;  // bad arguments, or the input cannot be read

void usage(std::ostream& out) {
  out << "usage: clanorb-ior IOR:...      decode the IOR given as an argument\n"
         "       clanorb-ior -f FILE      decode the IOR in FILE\n"
         "       clanorb-ior [-]          decode the IOR read from standard input\n"
         "Prints each profile's IIOP host and port and each tagged component: clanorb's\n"
         "(giop:clan, giop:otp, giop:via) with their address, boot id, runtime\n"
         "directory and address for other hosts (reach), and whether a clanorb client\n"
         "on this host would use them, and at which address.\n"
         "Exit status: 0 decoded, 1 not a well-formed IOR (or a malformed clanorb\n"
         "component), 2 bad arguments or unreadable input.\n";
}

// Reads the IOR text named by the arguments; false (message printed) if it cannot.
bool read_input(int argc, char** argv, std::string& text) {
  const std::string first = argc > 1 ? argv[1] : "-";
  if (argc > 3 || (argc == 3 && first != "-f") || (argc == 2 && first == "-f")) {
    usage(std::cerr);
    return false;
  }
  if (argc == 3) {
    std::ifstream in(argv[2], std::ios::binary);
    if (!in) {
      std::cerr << "clanorb-ior: cannot open " << argv[2] << ": " << std::strerror(errno) << "\n";
      return false;
    }
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    return true;
  }
  if (first != "-") {
    text = first;
    return true;
  }
  std::ostringstream all;
  all << std::cin.rdbuf();
  text = all.str();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (!std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help"))) {
    usage(std::cout);
    return 0;
  }
  std::string text;
  if (!read_input(argc, argv, text)) return kBadUsage;
  std::vector<uint8_t> octets;
  std::string error;
  clanorb::ior_tool::Ior ior;
  if (!clanorb::ior_tool::ior_octets(text, octets, error) ||
      !clanorb::ior_tool::decode_ior(octets, ior, error)) {
    std::cerr << "clanorb-ior: " << error << "\n";
    return kBadIor;
  }
  const int malformed = clanorb::ior_tool::print_ior(ior, std::cout);
  if (malformed > 0) {
    std::cerr << "clanorb-ior: " << malformed << " malformed clanorb component"
              << (malformed > 1 ? "s" : "") << "\n";
    return kBadIor;
  }
  return 0;
}
