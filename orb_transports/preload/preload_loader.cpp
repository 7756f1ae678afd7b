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
#include <cstdlib>
#include <cstring>
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

// The directory holding this library, with a trailing '/', made absolute
// before main runs: LD_PRELOAD may name the library by a relative path, and
// the program may change its working directory before its first ORB_init.
std::string& own_directory() {
  static std::string dir;
  return dir;
}

[[gnu::constructor]] void find_own_directory() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&find_own_directory), &info) || !info.dli_fname) return;
  char* full = realpath(info.dli_fname, nullptr);
  std::string path = full ? full : info.dli_fname;
  std::free(full);
  own_directory() = path.substr(0, path.rfind('/') + 1);
}

void load_plugins() {
  if (program_has_clanorb()) return;
  std::string path = own_directory() + kPluginsFile;
  // Never closed: the plugins' objects live as long as the program.
  if (!dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))
    std::fprintf(stderr, "clanorb preload: cannot load %s: %s\n", path.c_str(), dlerror());
}

// omniORB's ORB_init, or null with `why` saying why it was not found.
OrbInit real_orb_init(const char*& why) {
  static const char* error = nullptr;
  static OrbInit real = [] {
    auto f = reinterpret_cast<OrbInit>(dlsym(RTLD_NEXT, kOrbInitSymbol));
    if (!f) {
      const char* e = dlerror();
      error = e ? strdup(e) : "no such symbol";
    }
    return f;
  }();
  why = error;
  return real;
}

}  // namespace

CORBA::ORB_ptr CORBA::ORB_init(int& argc, char** argv, const char* orb_identifier,
                               const char* options[][2]) {
  static std::once_flag loaded;
  std::call_once(loaded, load_plugins);
  const char* why = nullptr;
  OrbInit real = real_orb_init(why);
  if (!real) {
    std::fprintf(stderr, "clanorb preload: omniORB's %s not found: %s\n", kOrbInitSymbol, why);
    throw CORBA::INITIALIZE(0, CORBA::COMPLETED_NO);
  }
  return real(argc, argv, orb_identifier, options);
}
