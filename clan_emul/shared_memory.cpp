#include "clan_emul/shared_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <utility>

#include "clan_emul/error_detail.hpp"

namespace clan {

SharedMemory& SharedMemory::operator=(SharedMemory&& o) noexcept {
  if (this != &o) {
    reset();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

void SharedMemory::reset() {
  if (data_) munmap(data_, size_);
  if (fd_ >= 0) close(fd_);
  data_ = nullptr;
  size_ = 0;
  fd_ = -1;
}

// No shrinking, no growing, no further seals (a peer adding a write seal).
constexpr int kSizeSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

static size_t page_round(size_t n) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (n + page - 1) / page * page;
}

Result<SharedMemory> SharedMemory::create(const std::string& name, size_t size) {
  if (size == 0) return set_error(Errc::kInvalidArgument, 0, "shared memory '%s' of 0 bytes", name.c_str());
  SharedMemory m;
  m.fd_ = memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (m.fd_ < 0) return set_error(Errc::kSystem, errno, "cannot create shared memory '%s': memfd_create", name.c_str());
  m.size_ = page_round(size);
  if (ftruncate(m.fd_, static_cast<off_t>(m.size_)) != 0) {
    return set_error(Errc::kNoResources, errno, "cannot size shared memory '%s' to %zu bytes: ftruncate",
                     name.c_str(), m.size_);
  }
  // Every peer that maps the region holds a writable descriptor of it: a
  // hostile one could shrink the file under our mapping, and our next access
  // would die of SIGBUS. Sealed, the size is fixed for good.
  if (fcntl(m.fd_, F_ADD_SEALS, kSizeSeals) != 0) {
    return set_error(Errc::kSystem, errno, "cannot seal shared memory '%s': fcntl(F_ADD_SEALS)", name.c_str());
  }
  void* p = mmap(nullptr, m.size_, PROT_READ | PROT_WRITE, MAP_SHARED, m.fd_, 0);
  if (p == MAP_FAILED) {
    return set_error(Errc::kNoResources, errno, "cannot map %zu bytes of shared memory '%s': mmap", m.size_,
                     name.c_str());
  }
  m.data_ = static_cast<std::byte*>(p);
  return m;
}

Result<SharedMemory> SharedMemory::open_peer(pid_t pid, int fd, const std::string& expect_name,
                                             size_t min_size) {
  if (pid <= 0 || fd < 0) return set_error(Errc::kForgedCookie, 0, "no such peer memory: pid %d, fd %d", pid, fd);
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", static_cast<int>(pid), fd);
  // The link names the memfd ("/memfd:NAME (deleted)"): check it before mapping,
  // so a cookie naming a closed-and-reused fd cannot map someone else's memory.
  char target[256];
  ssize_t n = readlink(path, target, sizeof target - 1);
  if (n < 0) return set_error(Errc::kStaleCookie, errno, "the peer's memory '%s' is gone: readlink", path);
  target[n] = '\0';
  std::string want = "/memfd:" + expect_name + " (deleted)";
  if (want != target) {
    return set_error(Errc::kStaleCookie, 0, "'%s' is '%s', not the peer's '%s'", path, target, want.c_str());
  }

  // The descriptor is needed only until the memory is mapped: the mapping
  // keeps the memfd alive, so a process holding many imports holds no
  // descriptor for them.
  const int opened = open(path, O_RDWR | O_CLOEXEC);
  if (opened < 0) return set_error(Errc::kStaleCookie, errno, "cannot open the peer's memory '%s': open", path);
  Result<SharedMemory> m = map_peer_fd(opened, path, min_size);
  close(opened);
  return m;
}

Result<SharedMemory> SharedMemory::map_peer_fd(int fd, const char* path, size_t min_size) {
  SharedMemory m;
  struct stat st {};
  if (fstat(fd, &st) != 0) return set_error(Errc::kSystem, errno, "cannot read the size of '%s': fstat", path);
  m.size_ = static_cast<size_t>(st.st_size);
  if (m.size_ < min_size || m.size_ == 0) {
    return set_error(Errc::kCorrupt, 0, "the peer's memory '%s' is %zu bytes, below %zu", path, m.size_, min_size);
  }
  // A region whose size its owner could still change is refused (see create()).
  const int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0 || (seals & kSizeSeals) != kSizeSeals) {
    return set_error(Errc::kCorrupt, 0, "the peer's memory '%s' is not sealed against resizing", path);
  }
  void* p = mmap(nullptr, m.size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    return set_error(Errc::kNoResources, errno, "cannot map %zu bytes of the peer's '%s': mmap", m.size_, path);
  }
  m.data_ = static_cast<std::byte*>(p);
  return m;
}

}  // namespace clan
