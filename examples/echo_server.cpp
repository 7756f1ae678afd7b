// echo_server: the null-echo servant (echoString returns its argument).
// Prints the IOR as the first line of stdout (or writes --ior-file F) and
// serves until SIGINT/SIGTERM. The transport and threading mode come from the
// ORB options, e.g.
//   echo_server -ORBendPoint giop:tcp:127.0.0.1:0
//   echo_server -ORBendPoint giop:unix:/tmp/echo.sock -ORBthreadPerConnectionPolicy 0
//   echo_server -ORBendPoint giop:clan::
#include "echo.hh"
#include "orb_common.hpp"

namespace {

class EchoServant final : public POA_echo {
 public:
  char* echoString(const char* mesg) override { return CORBA::string_dup(mesg); }
};

}  // namespace

int main(int argc, char** argv) {
  return orbx::run_server(argc, argv, "echo_server", [] { return new EchoServant; });
}
