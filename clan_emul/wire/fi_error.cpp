#include "clan_emul/wire/fi_error.hpp"

#include <rdma/fi_errno.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/wire/fi_loader.hpp"

namespace clan::wire {

Errc errc_from_fi(int fi_ret) {
  switch (std::abs(fi_ret)) {
    case 0: return Errc::kOk;
    case FI_EAGAIN: return Errc::kWouldBlock;
    case FI_ETIMEDOUT: return Errc::kTimeout;
    case FI_ECONNREFUSED: return Errc::kRefused;
    case FI_ECONNRESET:
    case FI_ECONNABORTED:
    case FI_ECANCELED:
    case FI_ESHUTDOWN: return Errc::kClosed;
    case FI_EKEYREJECTED: return Errc::kForgedCookie;
    case FI_ENOMEM:
    case FI_ENOSPC: return Errc::kNoResources;
    case FI_EINVAL: return Errc::kInvalidArgument;
    default: return Errc::kSystem;
  }
}

Errc fi_fail(int fi_ret, const char* fmt, ...) {
  char context[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(context, sizeof context, fmt, ap);
  va_end(ap);
  return set_error(errc_from_fi(fi_ret), 0, "%s: %s (fi_errno %d)", context,
                   clan_fi_strerror(std::abs(fi_ret)), std::abs(fi_ret));
}

}  // namespace clan::wire
