// A memfd-backed shared mapping. Peers on the same host map another process's
// memfd through /proc/<pid>/fd/<n>; memfds vanish with their last user, so a
// crashed process leaves no shared memory behind.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

#include "clan_emul/error.hpp"

namespace clan {

class SharedMemory {
 public:
  SharedMemory() = default;
  SharedMemory(SharedMemory&& o) noexcept { *this = std::move(o); }
  SharedMemory& operator=(SharedMemory&& o) noexcept;
  ~SharedMemory() { reset(); }

  // Creates a zero-filled region of `size` bytes (rounded up to pages),
  // sealed against any change of size.
  static Result<SharedMemory> create(const std::string& name, size_t size);
  // Maps another process's memfd. `expect_name` must match the memfd's name
  // (a reused fd number maps nothing); at least `min_size` bytes must exist,
  // and the memfd must be sealed as create() seals it (kCorrupt otherwise:
  // its owner could shrink it under our mapping). The result holds no
  // descriptor (fd() is -1): the mapping alone keeps the memory.
  static Result<SharedMemory> open_peer(pid_t pid, int fd, const std::string& expect_name,
                                        size_t min_size);

  std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  int fd() const { return fd_; }  // create()'s memfd, which peers open; -1 for a peer's memory
  void reset();

 private:
  // Maps the whole of an opened peer memfd after checking its size and seals.
  static Result<SharedMemory> map_peer_fd(int fd, const char* path, size_t min_size);

  std::byte* data_ = nullptr;
  size_t size_ = 0;
  int fd_ = -1;
};

}  // namespace clan
