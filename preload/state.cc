#include "preload/state.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <string_view>

#include "policy/fd_alias.h"
#include "policy/terminal.h"
#include "preload/cwd_cache.h"
#include "preload/reports.h"

namespace cordon::preload {

// In .data (not .bss), next to g_config and the report channel's scalars
// (reports.cc): the call path reads all of them, from one page.
__attribute__((section(".data"))) RealCalls g_real;
__attribute__((section(".data"))) bool g_broker_reads = false;
// wire::kEnvBypass: a change a denied or read-only rule refuses goes on to
// the supervisor, which may offer it to the approver as a bypass.
__attribute__((section(".data"))) bool g_bypass = false;

namespace {

using policy::AdmitOp;
using policy::AdmitVerdict;
using policy::PathClass;
using policy::Access;

struct Config {
  bool enabled = false;
  bool log = false;
  policy::AdmissionTable table;
};
Config g_config;
std::atomic<bool> g_initialized{false};

// Calls made by the library itself (and by libc on its behalf) go straight
// through. initial-exec: no __tls_get_addr, no allocation on first use.
thread_local bool t_busy __attribute__((tls_model("initial-exec"))) = false;

class Busy {
 public:
  Busy() { t_busy = true; }
  ~Busy() { t_busy = false; }
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;
};

void WriteAll(int fd, const char* s, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

__attribute__((cold)) void Warn(const char* what, const char* detail) {
  char line[512];
  size_t n = 0;
  for (const char* part : {"cordon preload: ", what, detail, "; passing every call through\n"}) {
    size_t len = strnlen(part, sizeof(line) - 1 - n);
    memcpy(line + n, part, len);
    n += len;
  }
  WriteAll(2, line, n);
}

// Adds each ':'-separated path of `list` with `kind`; false on a bad entry.
__attribute__((cold)) bool AddList(const char* list, Access kind, const char** bad) {
  if (list == nullptr) return true;
  std::string_view rest(list);
  while (!rest.empty()) {
    size_t sep = rest.find(wire::kPathSeparator);
    std::string_view item = rest.substr(0, sep);
    if (!item.empty() && !g_config.table.Add(item, kind)) {
      *bad = list;
      return false;
    }
    if (sep == std::string_view::npos) break;
    rest.remove_prefix(sep + 1);
  }
  return true;
}

__attribute__((cold)) bool ParseFd(const char* s, int* fd) {
  if (s == nullptr || *s == '\0') return false;
  long v = 0;
  for (; *s; ++s) {
    if (*s < '0' || *s > '9' || v > 1000000) return false;
    v = v * 10 + (*s - '0');
  }
  *fd = static_cast<int>(v);
  return true;
}

__attribute__((cold)) void ReadConfig() {
  const char* ws = getenv(wire::kEnvWorkspace);
  if (ws == nullptr) {
    Warn(wire::kEnvWorkspace, " is not set");
    return;
  }
  const char* mode = getenv(wire::kEnvWorkspaceMode);
  Access kind = mode && strcmp(mode, "rw") == 0 ? Access::kReadWrite : Access::kReadOnly;
  if (mode == nullptr || (strcmp(mode, "rw") != 0 && strcmp(mode, "ro") != 0)) {
    Warn("malformed ", wire::kEnvWorkspaceMode);
    return;
  }
  if (!g_config.table.SetWorkspace(ws, kind)) {
    Warn("malformed workspace: ", ws);
    return;
  }
  const char* bad = nullptr;
  if (!AddList(getenv(wire::kEnvReadOnly), Access::kReadOnly, &bad) ||
      !AddList(getenv(wire::kEnvReadWrite), Access::kReadWrite, &bad) ||
      !AddList(getenv(wire::kEnvDenied), Access::kDenied, &bad)) {
    Warn("malformed path list: ", bad);
    return;
  }
  const char* tmp_flag = getenv(wire::kEnvPrivateTmp);
  const char* tmpdir = getenv("TMPDIR");
  if (tmp_flag && strcmp(tmp_flag, "1") == 0 && tmpdir && *tmpdir) {
    if (!g_config.table.Add(tmpdir, Access::kReadWrite)) {
      Warn("malformed TMPDIR: ", tmpdir);
      return;
    }
  }
  const char* log = getenv(wire::kEnvLog);
  g_config.log = log && strcmp(log, "1") == 0;
  const char* broker = getenv(wire::kEnvBroker);
  g_broker_reads = broker && strcmp(broker, "1") == 0;
  const char* bypass = getenv(wire::kEnvBypass);
  g_bypass = bypass && strcmp(bypass, "1") == 0;
  int fd;
  int report_fd = -1;
  if (ParseFd(getenv(wire::kEnvReportFd), &fd)) {
    // Only a SOCK_SEQPACKET socket is ours; anything else (a closed or
    // reused number) is left alone.
    int type = 0;
    socklen_t len = sizeof(type);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_SEQPACKET) {
      report_fd = fd;
    }
  }
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const char* report_mode = getenv(wire::kEnvReportMode);
  StartReports(report_fd,
               static_cast<uint32_t>(ts.tv_nsec) ^ static_cast<uint32_t>(ts.tv_sec << 20),
               report_mode != nullptr && strcmp(report_mode, wire::kReportRefusedOnly) == 0);
  g_config.enabled = true;
}

const char* ErrnoName(int e) {
  switch (e) {
    case EACCES: return "EACCES";
    case EINVAL: return "EINVAL";
    case ENOENT: return "ENOENT";
    case ENAMETOOLONG: return "ENAMETOOLONG";
    default: return "errno";
  }
}

// One line on stderr: what was refused, on which path, by which rule.
__attribute__((cold)) void LogRefusal(wire::Call call, AdmitOp op, const char* path, const policy::Admission& a) {
  char line[768];
  size_t n = 0;
  auto put = [&](const char* s, size_t max) {
    size_t len = strnlen(s, max);
    if (len > sizeof(line) - 2 - n) len = sizeof(line) - 2 - n;
    memcpy(line + n, s, len);
    n += len;
  };
  put("cordon: refused ", 64);
  put(wire::CallName(static_cast<uint16_t>(call)), 32);
  put("(\"", 4);
  put(path, 512);
  put("\") ", 4);
  put(op == AdmitOp::kMutate ? "for writing" : "for reading", 16);
  put(": ", 4);
  put(a.reason, 128);
  put(" [", 4);
  put(ErrnoName(a.err), 16);
  put("]", 4);
  line[n++] = '\n';
  WriteAll(2, line, n);
}

// The directory a relative path is resolved against, or null when unknown
// (then the kernel alone decides); `*cached`: the cwd came from the cache
// (cwd_cache.h). errno is left as it was.
const char* Base(int dirfd, char* buf, bool* cached) {
  *cached = false;
  if (dirfd == AT_FDCWD) return Cwd(buf, cached);
  if (dirfd < 0) return nullptr;
  char proc[32] = "/proc/self/fd/";
  size_t n = strlen(proc);
  char digits[12];
  size_t d = 0;
  for (unsigned v = static_cast<unsigned>(dirfd); d == 0 || v; v /= 10) digits[d++] = '0' + v % 10;
  while (d) proc[n++] = digits[--d];
  proc[n] = '\0';
  int saved = errno;
  long len = ::syscall(SYS_readlinkat, AT_FDCWD, proc, buf, policy::kAdmissionMaxPath - 1);
  errno = saved;
  if (len <= 0 || buf[0] != '/') return nullptr;
  buf[len] = '\0';
  return buf;
}

// The report field's share of a path (the record holds its first bytes).
size_t ReportLen(const char* path) { return strnlen(path, wire::kReportPathMax); }

// `base`: what a relative `path` was resolved against; the report then
// names the absolute path, so that the supervisor's hint names what a
// grant must cover (the log line keeps the tool's own spelling).
__attribute__((cold)) bool Refuse(wire::Call call, AdmitOp op, const char* path,
                                  const policy::Admission& a, const char* base = nullptr) {
  char abs[policy::kAdmissionMaxPath];
  const char* reported = path;
  if (base != nullptr && path[0] != '/') {
    long n = policy::NormalizePath(path, base, abs);
    if (n > 0) reported = abs;
  }
  // A read of what is not there is the kernel's ENOENT (ENOTDIR), as it is
  // under Landlock, whose check comes after the name is looked up: refused,
  // git says it cannot access $XDG_CONFIG_HOME/git/attributes where it
  // would pass over its absence, and a shell searching PATH stops at 126
  // where it would go on. What exists stays refused, so this grants
  // nothing; it tells what a stat, which no layer refuses, tells.
  if (op == AdmitOp::kRead && a.err == EACCES) {
    struct stat st;
    const int saved = errno;
    const long r = ::syscall(SYS_newfstatat, AT_FDCWD, reported, &st, 0);
    const int err = errno;
    errno = saved;
    if (r != 0 && (err == ENOENT || err == ENOTDIR)) {
      Note(call, op, wire::ReportVerdict::kPassed, a.cls, 0, reported, ReportLen(reported));
      errno = err;
      return false;
    }
  }
  Note(call, op, wire::ReportVerdict::kRefused, a.cls, a.err, reported, ReportLen(reported));
  if (g_config.log) LogRefusal(call, op, path, a);
  errno = a.err;
  return false;
}

// An open of "/dev/stderr" and the like: judged by the held descriptor.
// Returns 1 (admit), 0 (refused) or -1 (not decided here: the path rules).
__attribute__((cold)) int AdmitHeldFd(wire::Call call, AdmitOp op, int fd, int flags,
                                      const char* path) {
  int saved = errno;
  long held = ::syscall(SYS_fcntl, fd, F_GETFL);
  errno = saved;
  switch (policy::JudgeHeldFd(held, flags)) {
    case policy::HeldFd::kCovered:
      Note(call, op, wire::ReportVerdict::kAdmitted, PathClass::kHeldFd, 0, path, ReportLen(path));
      return 1;
    case policy::HeldFd::kNotHeld:  // the kernel says ENOENT
      Note(call, op, wire::ReportVerdict::kPassed, PathClass::kHeldFd, 0, path, ReportLen(path));
      return 1;
    case policy::HeldFd::kNotCovered:
      Refuse(call, op, path,
             {policy::AdmitVerdict::kRefuse, PathClass::kHeldFd, EACCES,
              "the descriptor it names is not open for that access"});
      return 0;
    case policy::HeldFd::kPathOnly:
      break;
  }
  return -1;
}

// Reports an admission's verdict; false (errno set) when it refuses.
__attribute__((hot)) bool Conclude(wire::Call call, AdmitOp op, const char* path, size_t len,
                                   const policy::Admission& a, const char* base = nullptr) {
  if (a.verdict != AdmitVerdict::kAdmit) {
    const bool ruled = a.cls == PathClass::kDenied || a.cls == PathClass::kReadOnly ||
                       a.cls == PathClass::kWorkspace;
    if (!(g_bypass && op == AdmitOp::kMutate && ruled)) return Refuse(call, op, path, a, base);
    Note(call, op, wire::ReportVerdict::kPassed, a.cls, 0, path, len);
    return true;
  }
  Note(call, op, wire::ReportVerdict::kAdmitted, a.cls, 0, path, len);
  return true;
}

// A relative path: joined to the cwd or the dirfd's directory. Out of line,
// so that the 4 KiB base buffer is not on the stack of absolute paths (each
// stack page touched costs a TLB miss after every syscall).
__attribute__((noinline)) bool AdmitRelative(wire::Call call, AdmitOp op, int dirfd,
                                             const char* path, size_t len) {
  char base_buf[policy::kAdmissionMaxPath];
  bool cached;
  const char* base = Base(dirfd, base_buf, &cached);
  for (;;) {
    if (base == nullptr) {
      Note(call, op, wire::ReportVerdict::kPassed, PathClass::kMalformed, 0, path, len);
      return true;
    }
    policy::Admission a = policy::AdmitPath(g_config.table, op, std::string_view(path, len), base);
    if (a.verdict == AdmitVerdict::kAdmit || !cached) return Conclude(call, op, path, len, a, base);
    // A cached cwd may be stale (a chdir the library did not see): a refusal
    // is judged again on the kernel's answer.
    InvalidateCwd();
    base = FreshCwd(base_buf);
    cached = false;
  }
}

__attribute__((hot)) bool AdmitOne(wire::Call call, AdmitOp op, int dirfd, const char* path,
                                   int open_flags = -1) {
  // The kernel answers these itself (EFAULT, ENOENT): nothing to refuse.
  if (path == nullptr || path[0] == '\0') return true;
  if (open_flags >= 0 && path[0] == '/') {
    if (int fd = policy::FdAliasNumber(path); fd >= 0) {
      if (int held = AdmitHeldFd(call, op, fd, open_flags, path); held >= 0) return held == 1;
    }
    // A pseudo-terminal: whether it is the tool's own is the supervisor's
    // to know (policy/terminal.h).
    if (policy::ParseTerminalPath(path).kind != policy::TerminalKind::kNone) return true;
  }
  size_t len = strnlen(path, policy::kAdmissionMaxPath);
  if (path[0] != '/') return AdmitRelative(call, op, dirfd, path, len);
  return Conclude(call, op, path, len,
                  policy::AdmitPath(g_config.table, op, std::string_view(path, len), nullptr));
}

}  // namespace

// errno: an admitted call leaves it alone (nothing on the way changes it,
// see Base() and Send()); a refused one sets it.
__attribute__((hot)) bool Admit(wire::Call call, AdmitOp op, int dirfd, const char* path,
                                int dirfd2, const char* path2) {
  if (t_busy || !g_config.enabled) return true;
  Busy busy;
  if (!AdmitOne(call, op, dirfd, path)) return false;
  return path2 == nullptr || AdmitOne(call, op, dirfd2, path2);
}

__attribute__((hot)) bool AdmitOpen(wire::Call call, int flags, int dirfd, const char* path) {
  if (t_busy || !g_config.enabled) return true;
  Busy busy;
  return AdmitOne(call, OpenOp(flags), dirfd, path, flags);
}

__attribute__((cold, noinline)) int OpenBrokered(int fd, int dirfd, const char* path, int flags) {
  if (fd >= 0 || errno != EACCES || OpenOp(flags) != AdmitOp::kRead || path == nullptr) return fd;
  return static_cast<int>(
      ::syscall(SYS_openat, dirfd, path, flags | wire::kBrokerOpenFlag, 0));
}

namespace {

// A call the kernel refused with EACCES after the hooks let it through,
// reported as a refusal of `call` so that the supervisor can say why:
// `judge(base)` is the admission (`base`: what a relative path is resolved
// against, null for an absolute one or when there is none); nothing is
// reported when it admits. errno is left as it was.
template <class Judge>
__attribute__((cold)) void ReportKernelRefusal(wire::Call call, const char* path, Judge judge) {
  if (t_busy || !g_config.enabled || path == nullptr || *path == '\0') return;
  Busy busy;
  const int saved = errno;
  char base_buf[policy::kAdmissionMaxPath];
  bool cached;
  const char* base = path[0] == '/' ? nullptr : Base(AT_FDCWD, base_buf, &cached);
  const policy::Admission a = judge(base);
  if (a.verdict != AdmitVerdict::kAdmit) Refuse(call, AdmitOp::kRead, path, a, base);
  errno = saved;
}

}  // namespace

__attribute__((cold)) void ReportExecRefused(const char* path) {
  ReportKernelRefusal(wire::Call::kExecve, path, [](const char*) {
    return policy::Admission{AdmitVerdict::kRefuse, PathClass::kWorkspace, EACCES,
                             "the kernel refused to execute it"};
  });
}

__attribute__((cold)) void ReportListingRefused(const char* path) {
  ReportKernelRefusal(wire::Call::kOpendir, path, [path](const char* base) {
    // A relative path with no base to read it against: nothing to say.
    if (path[0] != '/' && base == nullptr) return policy::Admission{AdmitVerdict::kAdmit};
    return policy::AdmitPath(g_config.table, AdmitOp::kRead,
                             std::string_view(path, strnlen(path, policy::kAdmissionMaxPath)),
                             base);
  });
}

__attribute__((hot)) AdmitOp OpenOp(int flags) {
  if ((flags & O_ACCMODE) != O_RDONLY) return AdmitOp::kMutate;
  if (flags & (O_CREAT | O_TRUNC)) return AdmitOp::kMutate;
  if ((flags & O_TMPFILE) == O_TMPFILE) return AdmitOp::kMutate;
  return AdmitOp::kRead;
}

__attribute__((hot)) int FopenFlags(const char* mode) {
  if (mode == nullptr) return O_RDONLY;
  int flags;
  switch (mode[0]) {
    case 'r': flags = O_RDONLY; break;
    case 'w': flags = O_WRONLY | O_CREAT | O_TRUNC; break;
    case 'a': flags = O_WRONLY | O_CREAT | O_APPEND; break;
    default: return O_RDWR | O_CREAT;
  }
  for (const char* c = mode + 1; *c && *c != ','; ++c) {
    if (*c == '+') flags = (flags & ~O_ACCMODE) | O_RDWR;
  }
  return flags;
}

void ImageEnding(bool exiting) {
  if (t_busy || !g_config.enabled) return;
  Busy busy;
  EndImage(exiting);
}

__attribute__((cold)) void* ResolveLate(const char* name) {
  Busy busy;
  return dlsym(RTLD_NEXT, name);
}

template <class F>
void Resolve(F*& slot, const char* name) {
  slot = reinterpret_cast<F*>(dlsym(RTLD_NEXT, name));
}

__attribute__((cold)) void Initialize() {
  if (g_initialized.exchange(true)) return;
  Busy busy;
  int saved = errno;
  Resolve(g_real.open, "open");
  Resolve(g_real.open64, "open64");
  Resolve(g_real.openat, "openat");
  Resolve(g_real.openat64, "openat64");
  Resolve(g_real.open_2, "__open_2");
  Resolve(g_real.open64_2, "__open64_2");
  Resolve(g_real.openat_2, "__openat_2");
  Resolve(g_real.openat64_2, "__openat64_2");
  Resolve(g_real.creat, "creat");
  Resolve(g_real.creat64, "creat64");
  Resolve(g_real.fopen, "fopen");
  Resolve(g_real.fopen64, "fopen64");
  Resolve(g_real.freopen, "freopen");
  Resolve(g_real.freopen64, "freopen64");
  Resolve(g_real.opendir, "opendir");
  Resolve(g_real.unlink, "unlink");
  Resolve(g_real.unlinkat, "unlinkat");
  Resolve(g_real.remove, "remove");
  Resolve(g_real.rename, "rename");
  Resolve(g_real.renameat, "renameat");
  Resolve(g_real.renameat2, "renameat2");
  Resolve(g_real.execve, "execve");
  Resolve(g_real.execvpe, "execvpe");
  Resolve(g_real.fexecve, "fexecve");
  Resolve(g_real.execveat, "execveat");
  Resolve(g_real.exit_now, "_exit");
  Resolve(g_real.chdir, "chdir");
  Resolve(g_real.fchdir, "fchdir");
  ReadConfig();
  if (g_config.enabled) {
    pthread_atfork(nullptr, nullptr, ReportsAfterFork);
    pthread_atfork(nullptr, nullptr, ResetCwdAfterFork);
  }
  errno = saved;
}

namespace {

__attribute__((constructor)) void OnLoad() { Initialize(); }

// The image's last records: every thread's batch, then its totals.
__attribute__((destructor)) void OnExit() { ImageEnding(true); }

}  // namespace

}  // namespace cordon::preload
