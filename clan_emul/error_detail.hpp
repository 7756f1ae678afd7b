// What went wrong, in words, next to the Errc a failure returns: a message
// per thread, set where the failure happens (with errno, the path, the node,
// the call) and given context by each caller on the way up, as Aeron's
// aeron_set_err / aeron_append_err do. Only failure paths format text: the
// fast path returns its Errc and never touches this.
//
//   return set_error(Errc::kSystem, errno, "cannot create '%s': mkdir", dir);
//   ...
//   if (!r) return append_error_context(r.error(), "cannot start node '%s'", node);
//   ...
//   log(error_message(r.error()));  // "cannot start node 'a': cannot create ..."
//
// The message belongs to the thread that failed: a failure reported to this
// thread from another one (the OOB manager's) is given its words here.
// Entry points that set things up (Nic::open, OobManager::start, connect)
// clear the thread's message first, so that an old one is not reported with
// a new failure of the same code.
#pragma once

#include <string>

#include "clan_emul/error.hpp"

namespace clan {

// Records `code` and the message on this thread, replacing what was there,
// and returns `code`. A non-zero `errnum` appends ": <strerror> (errno N)".
Errc set_error(Errc code, int errnum, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

// Puts "<context>: " in front of this thread's message for `code` and
// returns `code`. If the thread holds no message for `code`, the context
// goes in front of to_string(code) instead.
Errc append_error_context(Errc code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// This thread's message if its last recorded failure has this code, else
// to_string(code): what a log line shows for a failure.
std::string error_message(Errc code);

// The last failure recorded on this thread: kOk, 0 and "" if none (or cleared).
Errc last_error_code();
int last_errno();
const std::string& last_error_message();

void clear_error();

}  // namespace clan
