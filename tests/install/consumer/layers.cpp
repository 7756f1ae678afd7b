// The layers usable on their own, from the installed headers and targets:
// VIPL (via/vipl.h, clanorb::via) over the emulated fabric (clanorb::clan_emul,
// whose error codes clan_emul/error.hpp names). Opens this process's NIC and
// closes it again.
#include <cstdio>

#include "clan_emul/error.hpp"
#include "via/vipl.h"

int main() {
  VIP_NIC_HANDLE nic{};
  VIP_RETURN opened = VipOpenNic(nullptr, &nic);
  if (opened != VIP_SUCCESS) {
    std::fprintf(stderr, "layers: VipOpenNic returned %d\n", static_cast<int>(opened));
    return 1;
  }
  VIP_RETURN closed = VipCloseNic(nic);
  std::printf("VIPL NIC opened and closed: %d\n", static_cast<int>(closed));
  return closed == VIP_SUCCESS && clan::Errc::kOk == clan::Errc{} ? 0 : 1;
}
