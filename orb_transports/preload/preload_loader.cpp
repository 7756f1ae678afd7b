// libclanorb_preload.so: preloaded (LD_PRELOAD) into an omniORB 4.2 program
// built without clanorb, it gives the program giop:clan, giop:otp and giop:via.
//
// It wraps CORBA::ORB_init. On the first call, unless the program already has
// clanorb's transports (linked in, statically or as shared libraries), it
// loads libclanorb_plugins.so from the clanorb/ directory beside itself; the
// plugins' static registration then runs before omniORB reads its options,
// config file and endpoints. Loading them from this library's own
// constructors instead would register every transport and option a second
// time in a program that links clanorb, which omniORB aborts on.
#include <dlfcn.h>

#include <cstdio>
#include <mutex>
#include <string>

#include <omniORB4/CORBA.h>
#include <omniORB4/giopEndpoint.h>

namespace {

using OrbInit = CORBA::ORB_ptr (*)(int&, char**, const char*, const char* [][2]);

// CORBA::ORB_init's mangled name, as libomniORB4 exports it.
constexpr const char* kOrbInitSymbol = "_ZN5CORBA8ORB_initERiPPcPKcPA2_S4_";
constexpr const char* kPluginsFile = "clanorb/libclanorb_plugins.so";

bool program_has_clanorb() {
  return omni::giopTransportImpl::str2Transport("giop:clan::") != nullptr;
}

// The directory holding this library, with a trailing '/'.
std::string own_directory() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&own_directory), &info) || !info.dli_fname) return "";
  std::string path = info.dli_fname;
  return path.substr(0, path.rfind('/') + 1);
}

void load_plugins() {
  if (program_has_clanorb()) return;
  std::string path = own_directory() + kPluginsFile;
  // Never closed: the plugins' objects live as long as the program.
  if (!dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))
    std::fprintf(stderr, "clanorb preload: cannot load %s: %s\n", path.c_str(), dlerror());
}

OrbInit real_orb_init() {
  static OrbInit real = reinterpret_cast<OrbInit>(dlsym(RTLD_NEXT, kOrbInitSymbol));
  return real;
}

}  // namespace

CORBA::ORB_ptr CORBA::ORB_init(int& argc, char** argv, const char* orb_identifier,
                               const char* options[][2]) {
  static std::once_flag loaded;
  std::call_once(loaded, load_plugins);
  OrbInit real = real_orb_init();
  if (!real) {
    std::fprintf(stderr, "clanorb preload: omniORB's %s not found: %s\n", kOrbInitSymbol,
                 dlerror());
    throw CORBA::INITIALIZE(0, CORBA::COMPLETED_NO);
  }
  return real(argc, argv, orb_identifier, options);
}
