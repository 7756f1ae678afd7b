#include "clan_emul/wire/fi_loader.hpp"

#include <dlfcn.h>
#include <rdma/fi_errno.h>

#include <mutex>

#include "clan_emul/error_detail.hpp"

namespace clan::wire {
namespace {

struct FiApi {
  int (*getinfo)(uint32_t, const char*, const char*, uint64_t, const fi_info*, fi_info**) = nullptr;
  void (*freeinfo)(fi_info*) = nullptr;
  fi_info* (*dupinfo)(const fi_info*) = nullptr;
  int (*fabric)(fi_fabric_attr*, fid_fabric**, void*) = nullptr;
  const char* (*strerror)(int) = nullptr;
  std::string error;  // why it could not be loaded
};

template <class F>
bool bind(void* lib, const char* name, F& f, std::string& error) {
  f = reinterpret_cast<F>(::dlsym(lib, name));
  if (!f && error.empty()) error = std::string("libfabric.so.1 has no ") + name;
  return f != nullptr;
}

const FiApi& api() {
  static const FiApi loaded = [] {
    FiApi a;
    void* lib = ::dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      a.error = ::dlerror();
      return a;
    }
    bind(lib, "fi_getinfo", a.getinfo, a.error);
    bind(lib, "fi_freeinfo", a.freeinfo, a.error);
    bind(lib, "fi_dupinfo", a.dupinfo, a.error);
    bind(lib, "fi_fabric", a.fabric, a.error);
    bind(lib, "fi_strerror", a.strerror, a.error);
    return a;
  }();
  return loaded;
}

}  // namespace

Errc load_libfabric() {
  if (api().error.empty()) return Errc::kOk;
  return set_error(Errc::kSystem, 0, "cannot load libfabric: %s (Debian's package libfabric1)",
                   api().error.c_str());
}

int clan_fi_getinfo(uint32_t version, const char* node, const char* service, uint64_t flags,
                    const fi_info* hints, fi_info** info) {
  return api().getinfo ? api().getinfo(version, node, service, flags, hints, info) : -FI_ENOSYS;
}

void clan_fi_freeinfo(fi_info* info) {
  if (api().freeinfo && info) api().freeinfo(info);
}

fi_info* clan_fi_dupinfo(const fi_info* info) { return api().dupinfo ? api().dupinfo(info) : nullptr; }

int clan_fi_fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context) {
  return api().fabric ? api().fabric(attr, fabric, context) : -FI_ENOSYS;
}

const char* clan_fi_strerror(int errnum) {
  return api().strerror ? api().strerror(errnum) : "libfabric is not loaded";
}

}  // namespace clan::wire
