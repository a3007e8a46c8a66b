#include "policy/fd_alias.h"

#include <fcntl.h>
#include <string.h>

#include <initializer_list>

namespace cordon::policy {
namespace {

// The digits after `prefix`, as a descriptor number; -1 otherwise.
int Number(const char* path, const char* prefix) {
  size_t n = strlen(prefix);
  if (strncmp(path, prefix, n) != 0 || path[n] == '\0') return -1;
  long v = 0;
  for (const char* c = path + n; *c; ++c) {
    if (*c < '0' || *c > '9' || v > 1 << 20) return -1;
    v = v * 10 + (*c - '0');
  }
  return static_cast<int>(v);
}

}  // namespace

__attribute__((hot)) int FdAliasNumber(const char* path) {
  // Every call sees this: most paths are rejected by their second byte.
  if (path[0] != '/' || (path[1] != 'd' && path[1] != 'p')) return -1;
  if (strncmp(path, "/dev/std", 8) == 0) {
    if (strcmp(path + 8, "in") == 0) return 0;
    if (strcmp(path + 8, "out") == 0) return 1;
    if (strcmp(path + 8, "err") == 0) return 2;
    return -1;
  }
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"}) {
    if (int fd = Number(path, prefix); fd >= 0) return fd;
  }
  return -1;
}

HeldFd JudgeHeldFd(long have, int open_flags) {
  if (have < 0) return HeldFd::kNotHeld;
  if (have & O_PATH) return HeldFd::kPathOnly;
  if (open_flags & O_PATH) return HeldFd::kCovered;
  int want = open_flags & O_ACCMODE;
  int held = static_cast<int>(have) & O_ACCMODE;
  return want == held || held == O_RDWR ? HeldFd::kCovered : HeldFd::kNotCovered;
}

}  // namespace cordon::policy
