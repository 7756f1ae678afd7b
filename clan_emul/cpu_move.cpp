#include "clan_emul/cpu_move.hpp"

#include <sched.h>

namespace clan {

bool move_off_this_cpu() {
  cpu_set_t own;
  CPU_ZERO(&own);
  if (::sched_getaffinity(0, sizeof own, &own) != 0) return false;
  const int here = ::sched_getcpu();
  if (here < 0 || here >= CPU_SETSIZE) return false;
  cpu_set_t others = own;
  CPU_CLR(here, &others);
  if (CPU_COUNT(&others) == 0) return false;
  // The kernel migrates a thread at once when its CPU leaves its mask.
  if (::sched_setaffinity(0, sizeof others, &others) != 0) return false;
  ::sched_setaffinity(0, sizeof own, &own);
  return ::sched_getcpu() != here;
}

}  // namespace clan
