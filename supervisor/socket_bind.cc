#include "supervisor/socket_bind.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "base/fd.h"
#include "supervisor/caps.h"
#include "supervisor/fd_passing.h"

#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

namespace cordon::supervisor {
namespace {

// The steps of the child, for the error that names one.
enum Step : int {
  kBound = 0,
  kEnter,
  kUnshare,
  kIdMap,
  kHold,
  kCloneTree,
  kTmpfs,
  kChroot,
  kMkdir,
  kMountParent,
  kDropCaps,
  kBind,
};

const char* StepName(int step) {
  switch (step) {
    case kEnter:
      return "fchdir to the held directory";
    case kUnshare:
      return "unshare(CLONE_NEWUSER | CLONE_NEWNS)";
    case kIdMap:
      return "writing the user namespace's id maps";
    case kHold:
      return "opening the held directory in the new namespace";
    case kCloneTree:
      return "open_tree(OPEN_TREE_CLONE) of the held directory";
    case kTmpfs:
      return "making the scratch tmpfs";
    case kChroot:
      return "chroot into the scratch tmpfs";
    case kMkdir:
      return "making the name's directories";
    case kMountParent:
      return "mounting the held directory in the scratch tmpfs";
    case kDropCaps:
      return "dropping capabilities";
    default:
      return "the bind's child";
  }
}

struct ChildStatus {
  int step = kBound;
  int err = 0;
};

// What the child needs, made before the fork: it may not allocate.
struct Plan {
  int sock;
  int parent;
  int status;  // the pipe's write end
  char uid_map[32];
  char gid_map[32];
  std::vector<char> mount_at;  // NUL-terminated, cut at each '/' in turn
  const char* cwd;
  sockaddr_un addr;
  socklen_t addr_len;
};

// Everything below until BindAsWritten runs in the forked child of a
// process with threads: raw system calls only, no allocation, no lock.

int WriteFile(const char* path, const char* text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  ssize_t len = static_cast<ssize_t>(std::strlen(text));
  int err = ::write(fd, text, static_cast<size_t>(len)) == len ? 0 : errno;
  ::close(fd);
  return err;
}

int MakeDirs(char* path) {
  for (char* p = path;; ++p) {
    if (*p != '/' && *p != '\0') continue;
    const char was = *p;
    *p = '\0';
    int rc = ::mkdir(path, 0700);
    *p = was;
    if (rc != 0 && errno != EEXIST) return errno;
    if (was == '\0') return 0;
  }
}

ChildStatus RunChild(Plan& plan) {
  auto fail = [](int step) { return ChildStatus{step, errno}; };
  if (::fchdir(plan.parent) != 0) return fail(kEnter);
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return fail(kUnshare);
  // The one id of ours, mapped to itself (an unprivileged user may map
  // only that); setgroups is denied first, as the kernel asks of one.
  (void)WriteFile("/proc/self/setgroups", "deny");
  if (int err = WriteFile("/proc/self/uid_map", plan.uid_map); err != 0) return {kIdMap, err};
  if (int err = WriteFile("/proc/self/gid_map", plan.gid_map); err != 0) return {kIdMap, err};
  // The working directory now names the held inode on this namespace's
  // copy of its mount: what open_tree may clone.
  int held = ::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (held < 0) return fail(kHold);
  int tree = static_cast<int>(::syscall(
      SYS_open_tree, held, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE));
  if (tree < 0) return fail(kCloneTree);
  int fs = static_cast<int>(::syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC));
  if (fs < 0) return fail(kTmpfs);
  if (::syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0700", 0) != 0 ||
      ::syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0) {
    return fail(kTmpfs);
  }
  int scratch = static_cast<int>(::syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0));
  if (scratch < 0) return fail(kTmpfs);
  // Attached over the held directory (in this namespace only): a place
  // reached without a path. (A detached mount takes no mount on top of it
  // before Linux 6.15.)
  if (::syscall(SYS_move_mount, scratch, "", held, "",
                MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
    return fail(kTmpfs);
  }
  if (::fchdir(scratch) != 0 || ::chroot(".") != 0) return fail(kChroot);
  if (int err = MakeDirs(plan.mount_at.data()); err != 0) return {kMkdir, err};
  if (::syscall(SYS_move_mount, tree, "", AT_FDCWD, plan.mount_at.data(),
                MOVE_MOUNT_F_EMPTY_PATH) != 0) {
    return fail(kMountParent);
  }
  if (::chdir(plan.cwd) != 0) return fail(kMountParent);
  __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct d[2] = {};
  if (::syscall(SYS_capset, &h, d) != 0) return fail(kDropCaps);
  if (::bind(plan.sock, reinterpret_cast<const sockaddr*>(&plan.addr), plan.addr_len) != 0) {
    return {kBind, errno};
  }
  return {};
}

}  // namespace

Result<int> BindAsWritten(int sock, int parent, const std::string& written,
                          const policy::SocketNameLayout& layout) {
  Plan plan{};
  plan.sock = sock;
  plan.parent = parent;
  if (written.size() >= sizeof plan.addr.sun_path) return ENAMETOOLONG;
  plan.addr.sun_family = AF_UNIX;
  std::memcpy(plan.addr.sun_path, written.data(), written.size());
  plan.addr_len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + written.size() + 1);
  // The ids of the forking thread, which the child has.
  std::snprintf(plan.uid_map, sizeof plan.uid_map, "%u %u 1", ::geteuid(), ::geteuid());
  std::snprintf(plan.gid_map, sizeof plan.gid_map, "%u %u 1", ::getegid(), ::getegid());
  plan.mount_at.assign(layout.mount_at.begin(), layout.mount_at.end());
  plan.mount_at.push_back('\0');
  plan.cwd = layout.cwd.c_str();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Errno("pipe2");
  Fd ours(fds[0]), theirs(fds[1]);
  plan.status = theirs.get();
  pid_t pid;
  {
    // A root supervisor's child maps uid 0 to itself, which the kernel
    // allows only if CAP_SETFCAP was effective at the unshare; a notify
    // thread keeps it lowered (caps.h). The child drops every capability
    // before it binds.
    SupervisorPermissions raise;
    pid = ::fork();
    if (pid == 0) {
      ChildStatus st = RunChild(plan);
      (void)::write(plan.status, &st, sizeof st);
      ::_exit(0);
    }
  }
  if (pid < 0) return Errno("fork");
  theirs.reset();
  ChildStatus st;
  const int err = ReadChildStatus(ours.get(), &st, sizeof st, 10000);
  if (err != 0) ::kill(pid, SIGKILL);
  // ECHILD if the launcher's reaping took it first (tool_wait.cc): its
  // status came through the pipe.
  ::waitpid(pid, nullptr, 0);
  if (err != 0) return SysError{err, "the bind's child"};
  if (st.step == kBound) return 0;
  if (st.step == kBind) return st.err;
  return SysError{st.err, StepName(st.step)};
}

}  // namespace cordon::supervisor
