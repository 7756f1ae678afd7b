// A CORBA::TRANSIENT handler that retries a call whose connect was refused
// (TRANSIENT_ConnectFailed, completed NO: nothing was sent), for up to 5 s
// per call; any other TRANSIENT propagates. For transports whose listen
// backlog a burst of clients can overflow (Transport::small_listen_backlog).
// The cookie, if not null, is a std::atomic<unsigned long> counting retries.
#pragma once

#include <omniORB4/CORBA.h>
#include <omniORB4/minorCode.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace clan::orbtest {

inline CORBA::Boolean retry_refused_connect(void* cookie, CORBA::ULong n_retries,
                                            const CORBA::TRANSIENT& ex) {
  thread_local std::chrono::steady_clock::time_point first;
  auto now = std::chrono::steady_clock::now();
  if (n_retries == 0) first = now;
  if (ex.minor() != omni::TRANSIENT_ConnectFailed || now - first > std::chrono::seconds(5))
    return false;
  if (cookie) ++*static_cast<std::atomic<unsigned long>*>(cookie);
  std::this_thread::yield();  // let the server's accepting thread run
  return true;
}

}  // namespace clan::orbtest
