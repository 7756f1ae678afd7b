#include "clan_emul/error_detail.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace clan {

namespace {

struct ErrorDetail {
  Errc code = Errc::kOk;
  int errnum = 0;
  std::string message;
};

ErrorDetail& detail() {
  thread_local ErrorDetail d;
  return d;
}

std::string vformat(const char* fmt, va_list args) {
  va_list again;
  va_copy(again, args);
  char small[256];
  const int n = std::vsnprintf(small, sizeof small, fmt, args);
  std::string out;
  if (n < 0) {
    out = fmt;  // a bad format: the format itself says more than nothing
  } else if (static_cast<size_t>(n) < sizeof small) {
    out.assign(small, static_cast<size_t>(n));
  } else {
    out.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(out.data(), out.size(), fmt, again);
    out.resize(static_cast<size_t>(n));
  }
  va_end(again);
  return out;
}

std::string errno_text(int errnum) {
  char buf[128];
  // GNU strerror_r: returns the text, in buf or a static string.
  const char* text = strerror_r(errnum, buf, sizeof buf);
  return std::string(": ") + text + " (errno " + std::to_string(errnum) + ")";
}

}  // namespace

Errc set_error(Errc code, int errnum, const char* fmt, ...) {
  ErrorDetail& d = detail();
  va_list args;
  va_start(args, fmt);
  d.message = vformat(fmt, args);
  va_end(args);
  if (errnum != 0) d.message += errno_text(errnum);
  d.code = code;
  d.errnum = errnum;
  return code;
}

Errc append_error_context(Errc code, const char* fmt, ...) {
  ErrorDetail& d = detail();
  va_list args;
  va_start(args, fmt);
  std::string context = vformat(fmt, args);
  va_end(args);
  if (d.code != code || d.message.empty()) {
    d.message = to_string(code);
    d.errnum = 0;
  }
  d.message = context + ": " + d.message;
  d.code = code;
  return code;
}

std::string error_message(Errc code) {
  const ErrorDetail& d = detail();
  if (d.code == code && !d.message.empty()) return d.message;
  return to_string(code);
}

Errc last_error_code() { return detail().code; }
int last_errno() { return detail().errnum; }
const std::string& last_error_message() { return detail().message; }

void clear_error() {
  ErrorDetail& d = detail();
  d.code = Errc::kOk;
  d.errnum = 0;
  d.message.clear();
}

}  // namespace clan
