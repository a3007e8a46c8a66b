#include "preload/cwd_cache.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "policy/path_admission.h"
#include "preload/state.h"

#define CORDON_EXPORT extern "C" __attribute__((visibility("default")))

namespace cordon::preload {
namespace {

// g_gen is odd while a writer fills g_buf; every invalidation adds 2.
// g_filled is the (even) generation g_buf holds.
std::atomic<uint64_t> g_gen{0};
std::atomic<uint64_t> g_filled{1};
std::atomic<size_t> g_len{0};
char g_buf[policy::kAdmissionMaxPath];

}  // namespace

void InvalidateCwd() { g_gen.fetch_add(2, std::memory_order_acq_rel); }

void ResetCwdAfterFork() {
  uint64_t g = g_gen.load(std::memory_order_relaxed);
  g_gen.store((g | 1) + 1, std::memory_order_relaxed);
}

const char* FreshCwd(char* buf) {
  uint64_t g = g_gen.load(std::memory_order_acquire);
  int saved = errno;
  long n = ::syscall(SYS_getcwd, buf, policy::kAdmissionMaxPath);
  errno = saved;
  if (n <= 0 || buf[0] != '/') return nullptr;
  // Filled only if no chdir was seen since before the getcwd, and no other
  // writer is at it.
  if ((g & 1) == 0 && g_gen.compare_exchange_strong(g, g + 1, std::memory_order_acq_rel)) {
    memcpy(g_buf, buf, static_cast<size_t>(n));
    g_len.store(static_cast<size_t>(n), std::memory_order_relaxed);
    uint64_t writing = g + 1;
    if (g_gen.compare_exchange_strong(writing, g + 2, std::memory_order_acq_rel)) {
      g_filled.store(g + 2, std::memory_order_release);
    } else {
      g_gen.fetch_add(1, std::memory_order_acq_rel);  // invalidated meanwhile: even, unfilled
    }
  }
  return buf;
}

const char* Cwd(char* buf, bool* cached) {
  uint64_t g = g_gen.load(std::memory_order_acquire);
  if ((g & 1) == 0 && g_filled.load(std::memory_order_acquire) == g) {
    size_t n = g_len.load(std::memory_order_relaxed);
    memcpy(buf, g_buf, n);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (g_gen.load(std::memory_order_relaxed) == g && n > 0 && buf[0] == '/') {
      *cached = true;
      return buf;
    }
  }
  *cached = false;
  return FreshCwd(buf);
}

}  // namespace cordon::preload

using cordon::preload::g_real;
using cordon::preload::InvalidateCwd;

// The cwd changes only here for a tool using libc; the cache follows.
CORDON_EXPORT int chdir(const char* path) {
  int r = g_real.chdir ? g_real.chdir(path) : static_cast<int>(::syscall(SYS_chdir, path));
  InvalidateCwd();
  return r;
}

CORDON_EXPORT int fchdir(int fd) {
  int r = g_real.fchdir ? g_real.fchdir(fd) : static_cast<int>(::syscall(SYS_fchdir, fd));
  InvalidateCwd();
  return r;
}
