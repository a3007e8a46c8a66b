#include "supervisor/creation_umask.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "supervisor/tool_fd.h"

namespace cordon::supervisor {
namespace {

// Whether this thread owns its fs_struct (OwnThread), and the umask it was
// last given (umask(2) is then set only when the tool's changes).
thread_local bool t_own = false;
thread_local mode_t t_mask = 0;

// The process umask, read without changing it (umask(2) would, for every
// thread at once): /proc/thread-self/status says it (Linux 4.7+).
mode_t SharedUmask() {
  FILE* f = std::fopen("/proc/thread-self/status", "re");
  if (f == nullptr) return 0777;  // unknown: FixMode puts every bit back
  char line[256];
  unsigned mask = 0777;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "Umask: %o", &mask) == 1) break;
  }
  std::fclose(f);
  return static_cast<mode_t>(mask & 0777);
}

}  // namespace

bool CreationUmask::OwnThread() {
  if (t_own) return true;
  if (::unshare(CLONE_FS) != 0) return false;
  ::umask(0);
  t_own = true;
  t_mask = 0;
  return true;
}

CreationUmask::CreationUmask(mode_t tool_umask) : tool_umask_(tool_umask & 0777), exact_(t_own) {
  if (exact_ && t_mask != tool_umask_) {
    ::umask(tool_umask_);
    t_mask = tool_umask_;
  }
}

mode_t CreationUmask::Mode(mode_t requested) const {
  return exact_ ? (requested & 07777) : (requested & 07777 & ~tool_umask_);
}

bool CreationUmask::FixMode(int fd, mode_t requested) const {
  if (exact_) return true;
  const mode_t want = requested & 0777 & ~tool_umask_;
  if ((want & SharedUmask()) == 0) return true;  // nothing was taken twice
  struct stat st;
  if (::fstat(fd, &st) != 0) return false;
  if ((st.st_mode & 0777) == want) return true;
  // Through /proc/self/fd: an O_PATH fd takes no fchmod.
  return ::fchmodat(AT_FDCWD, ProcPath(fd).c_str(), (st.st_mode & 07000) | want, 0) == 0;
}

}  // namespace cordon::supervisor
