// libfabric's failures in clanorb's words: a negative FI_E* return becomes
// an Errc with its cause (fi_strerror, the return value and the call) left
// on the failing thread, as set_error does for errno (error_detail.hpp).
#pragma once

#include "clan_emul/error.hpp"

namespace clan::wire {

// The Errc a negative libfabric return stands for: -FI_EAGAIN is
// kWouldBlock, -FI_ETIMEDOUT kTimeout, -FI_ECONNREFUSED kRefused,
// -FI_ECONNRESET, -FI_ECANCELED and -FI_ESHUTDOWN kClosed, -FI_EKEYREJECTED
// kForgedCookie, -FI_ENOMEM and -FI_ENOSPC kNoResources, -FI_EINVAL
// kInvalidArgument, anything else kSystem.
Errc errc_from_fi(int fi_ret);

// Records the failure of a libfabric call on this thread and returns its
// Errc: "<context>: <fi_strerror> (fi_errno N)".
Errc fi_fail(int fi_ret, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace clan::wire
