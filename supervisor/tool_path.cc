#include "supervisor/tool_path.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "policy/path_admission.h"
#include "policy/policy.h"
#include "supervisor/caps.h"
#include "supervisor/tool_creds.h"

namespace cordon::supervisor {
namespace {

// The directory a relative path starts from, read from /proc/TID.
Result<std::string> BaseDir(pid_t tid, int dirfd) {
  char link[64];
  if (dirfd == AT_FDCWD)
    std::snprintf(link, sizeof link, "/proc/%d/cwd", tid);
  else
    std::snprintf(link, sizeof link, "/proc/%d/fd/%d", tid, dirfd);
  char buf[PATH_MAX];
  ssize_t n = RetryAsSupervisor([&] { return ::readlink(link, buf, sizeof buf - 1); });
  if (n < 0) return SysError{errno == ENOENT ? EBADF : errno, "readlink", link};
  std::string s(buf, static_cast<size_t>(n));
  if (s.empty() || s[0] != '/') return SysError{ENOTDIR, "dirfd is not a directory"};
  if (s.size() > 10 && s.compare(s.size() - 10, 10, " (deleted)") == 0) {
    return SysError{ENOENT, "directory deleted"};
  }
  return s;
}

}  // namespace

Result<std::string> Absolute(pid_t tid, int dirfd, const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  auto base = BaseDir(tid, dirfd);
  if (!base) return base.error();
  if (path.empty()) return base;
  // The preload's join (policy/path_admission.h): leading ".." segments
  // climb the base, a ".." after a name is refused.
  char out[policy::kAdmissionMaxPath];
  long n = policy::NormalizePath(path, base->c_str(), out);
  if (n == -EACCES) return SysError{EACCES, "raw .. segment", path};
  if (n < 0) return SysError{static_cast<int>(-n), "path", path};
  std::string abs(out, static_cast<std::size_t>(n));
  if (dirfd != AT_FDCWD && !policy::IsWithin(abs, *base)) {
    // It climbed from the dirfd, which must be a directory (else ENOTDIR,
    // as from the kernel; a path below a file fails on its own later).
    struct stat st;
    std::string fd_link = "/proc/" + std::to_string(tid) + "/fd/" + std::to_string(dirfd);
    if (RetryAsSupervisor([&] { return ::stat(fd_link.c_str(), &st); }) != 0 ||
        !S_ISDIR(st.st_mode)) {
      return SysError{ENOTDIR, "dirfd is not a directory"};
    }
  }
  return abs;
}

bool ToolSeesEntry(const std::string& abs) {
  std::string norm;
  if (!NormaliseNoDotDot(abs, norm) || policy::IsWithin(norm, "/proc")) return false;
  ToolPermissions as_tool;
  struct stat st;
  return as_tool.lowered() && ::lstat(norm.c_str(), &st) == 0;
}

std::string ForTool(const std::string& abs, pid_t tid) {
  auto under = [&](std::string_view prefix) {
    return abs.compare(0, prefix.size(), prefix) == 0 &&
           (abs.size() == prefix.size() || abs[prefix.size()] == '/');
  };
  bool self = under("/proc/self");
  if (!self && !under("/proc/thread-self")) return abs;
  auto creds = ReadToolCreds(tid);
  if (!creds) return "/proc/" + std::to_string(tid) + "/.gone";  // fails to resolve
  if (self) return "/proc/" + std::to_string(creds->tgid) + abs.substr(10);
  return "/proc/" + std::to_string(creds->tgid) + "/task/" + std::to_string(tid) + abs.substr(17);
}

Result<Located> Canonical(const WriteRoots& roots, const std::string& abs) {
  char buf[PATH_MAX];
  if (::realpath(abs.c_str(), buf) == nullptr) return Errno("realpath", abs);
  return roots.Locate(buf, Change::kContent);
}

}  // namespace cordon::supervisor
