// Shared helpers of the ORB example programs (echo, ttcp, rate): ORB
// options with defaults, error reporting with CORBA exception names and minor
// codes, a signal wait and the whole life of a one-servant server.
// Header-only; the CORBA-free parts are in cli_common.hpp.
//
// Every program passes its whole command line to CORBA::ORB_init, so any
// transport omniORB knows (giop:tcp, giop:unix, and the clanorb plugins linked
// through clanorb::transports: giop:clan, ...) is chosen with -ORBendPoint on
// the server side; a client needs only the IOR.
#pragma once

#include <omniORB4/CORBA.h>
#include <pthread.h>
#include <signal.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_common.hpp"

namespace orbx {

// ---------------------------------------------------------------------------
// ORB options

// Returns argv with `option value` appended when the user did not give
// `option` (defaults such as call timeouts, so that no client can hang).
class OrbArgs {
 public:
  OrbArgs(int argc, char** argv) {
    for (int i = 0; i < argc; ++i) store_.emplace_back(argv[i]);
  }
  void add_default(const std::string& option, const std::string& value) {
    for (const auto& a : store_)
      if (a == option) return;
    store_.push_back(option);
    store_.push_back(value);
  }
  // argc/argv for ORB_init; ORB_init removes the options it consumed.
  int& argc() {
    build();
    return argc_;
  }
  char** argv() {
    build();
    return ptrs_.data();
  }

 private:
  void build() {
    if (!ptrs_.empty()) return;
    for (auto& s : store_) ptrs_.push_back(s.data());
    argc_ = static_cast<int>(ptrs_.size());
    ptrs_.push_back(nullptr);
  }
  std::vector<std::string> store_;
  std::vector<char*> ptrs_;
  int argc_ = 0;
};

// ---------------------------------------------------------------------------
// Errors

// "TRANSIENT (minor 0x535a0002 TRANSIENT_ConnectFailed, COMPLETED_NO)".
inline std::string describe(const CORBA::Exception& e) {
  std::ostringstream os;
  os << e._name();
  if (const CORBA::SystemException* se = CORBA::SystemException::_downcast(&e)) {
    os << " (minor 0x" << std::hex << se->minor() << std::dec;
    if (const char* ms = se->NP_minorString()) os << " " << ms;
    switch (se->completed()) {
      case CORBA::COMPLETED_YES: os << ", COMPLETED_YES"; break;
      case CORBA::COMPLETED_NO: os << ", COMPLETED_NO"; break;
      default: os << ", COMPLETED_MAYBE"; break;
    }
    os << ")";
  }
  return os.str();
}

// Runs body(); maps every failure to a message on stderr and an exit status.
inline int guarded_main(const char* prog, const char* usage, const std::function<int()>& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    std::cerr << prog << ": " << e.what() << "\nusage: " << usage << std::endl;
    return 2;
  } catch (const CORBA::Exception& e) {
    std::cerr << prog << ": CORBA exception " << describe(e) << std::endl;
    return 1;
  } catch (const omniORB::fatalException& e) {
    std::cerr << prog << ": omniORB fatal error at " << e.file() << ":" << e.line() << ": " << e.errmsg() << std::endl;
    return 1;
  } catch (const std::exception& e) {
    std::cerr << prog << ": " << e.what() << std::endl;
    return 1;
  }
}

// The client programs' defaults: a call or a connect that hangs ends in an
// exception instead, unless the command line sets its own timeout.
inline void add_client_timeouts(OrbArgs& oa, const char* call_timeout_ms) {
  oa.add_default("-ORBclientCallTimeOutPeriod", call_timeout_ms);
  oa.add_default("-ORBclientConnectTimeOutPeriod", "5000");
}

// Initialises the ORB from `oa`, runs body(orb, argc, argv) on what ORB_init
// left of the command line, and destroys the ORB however body ends.
inline int run_with_orb(const char* prog, const char* usage, OrbArgs& oa,
                        const std::function<int(CORBA::ORB_ptr, int, char**)>& body) {
  CORBA::ORB_var orb = CORBA::ORB_init(oa.argc(), oa.argv());
  const int rc = guarded_main(prog, usage, [&]() -> int { return body(orb, oa.argc(), oa.argv()); });
  orb->destroy();
  return rc;
}

// ---------------------------------------------------------------------------
// Servers: block SIGINT/SIGTERM in every thread (call before ORB_init so the
// ORB's threads inherit the mask), then wait for one of them synchronously.

inline sigset_t block_termination_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

inline int wait_termination_signal(const sigset_t& set) {
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
  return sig;
}

// Writes the IOR to `path` (atomically: temporary file, then rename) or, when
// path is empty, as the first line of stdout.
inline void publish_ior(const char* ior, const std::string& path) {
  if (path.empty()) {
    std::cout << ior << std::endl;
    return;
  }
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << ior << "\n";
    if (!f) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp + " to " + path);
}

// ---------------------------------------------------------------------------
// A server: activates one servant in the root POA, publishes its IOR, serves
// until SIGINT/SIGTERM/SIGHUP, then destroys the ORB (which waits for calls in
// progress). Options: --ior-file F. Exit status 0 after a clean shutdown.

inline int run_server(int argc, char** argv, const char* prog,
                      const std::function<PortableServer::ServantBase*()>& make_servant) {
  const char* usage = "[-ORB options, e.g. -ORBendPoint giop:tcp::] [--ior-file F]";
  sigset_t sigs = block_termination_signals();
  return guarded_main(prog, usage, [&]() -> int {
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
    int status = 0;
    try {
      Args args(argc, argv);
      std::string ior_file = args.take("--ior-file", "");
      args.finish();

      CORBA::Object_var obj = orb->resolve_initial_references("RootPOA");
      PortableServer::POA_var poa = PortableServer::POA::_narrow(obj);
      PortableServer::ServantBase* servant = make_servant();
      PortableServer::ObjectId_var id = poa->activate_object(servant);
      servant->_remove_ref();  // the POA holds it now
      obj = poa->id_to_reference(id.in());
      CORBA::String_var ior = orb->object_to_string(obj);
      PortableServer::POAManager_var mgr = poa->the_POAManager();
      mgr->activate();
      publish_ior(ior.in(), ior_file);

      int sig = wait_termination_signal(sigs);
      std::cerr << prog << ": signal " << sig << " (" << strsignal(sig) << "), shutting down" << std::endl;
    } catch (...) {
      // Destroy the ORB on every path so that no ORB thread outlives main.
      try {
        orb->destroy();
      } catch (...) {
      }
      throw;
    }
    orb->destroy();
    return status;
  });
}

}  // namespace orbx
