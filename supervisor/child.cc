#include "supervisor/child.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "supervisor/caps.h"
#include "supervisor/fd_passing.h"
#include "supervisor/landlock.h"
#include "supervisor/uapi.h"

namespace cordon::supervisor {
namespace {

[[noreturn]] void Fail(const ChildSpec& spec, ChildStage stage, int err, const char* what) {
  ChildFailure f{stage, err, {}};
  std::strncpy(f.what, what, sizeof(f.what) - 1);
  ssize_t n = ::write(spec.status_pipe, &f, sizeof(f));
  (void)n;
  _exit(stage == ChildStage::kExec ? (err == ENOENT ? 127 : 126) : 125);
}

void ResetSignals() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    // Not glibc's reserved SIGCANCEL/SIGSETXID: sigaction refuses them.
    if (sig == SIGKILL || sig == SIGSTOP || (sig >= 32 && sig < SIGRTMIN)) continue;
    ::sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

}  // namespace

void RunChild(const ChildSpec& spec) {
  // A new session: no controlling terminal, so no TIOCSTI into the caller's.
  if (::setsid() < 0) Fail(spec, ChildStage::kSetup, errno, "setsid");
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) Fail(spec, ChildStage::kSetup, errno, "pdeathsig");
  // The parent may have died before PDEATHSIG was armed.
  if (::getppid() != spec.parent) _exit(125);
  ResetSignals();
  if (::fchdir(spec.workspace_fd) != 0) Fail(spec, ChildStage::kSetup, errno, "chdir workspace");
  // Every inherited fd above 2 is closed at exec; ours are needed until then.
  if (::syscall(uapi::kNrCloseRange, 3u, ~0u, 4u /*CLOSE_RANGE_CLOEXEC*/) != 0) {
    Fail(spec, ChildStage::kSetup, errno, "close_range");
  }
  if (spec.keep_fd >= 0) ::fcntl(spec.keep_fd, F_SETFD, 0);
  if (spec.stdout_fd >= 0 && ::dup2(spec.stdout_fd, 1) < 0) {
    Fail(spec, ChildStage::kSetup, errno, "stdout");
  }
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);

  if (int rc = spec.caps->Apply(); rc != 0) Fail(spec, ChildStage::kSetup, -rc, "drop capabilities");
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) Fail(spec, ChildStage::kSetup, errno, "no_new_privs");
  if (spec.ruleset_fd >= 0) {
    if (int rc = RestrictSelf(spec.ruleset_fd, spec.restrict_flags); rc != 0) {
      Fail(spec, ChildStage::kSetup, -rc, "landlock_restrict_self");
    }
    ::close(spec.ruleset_fd);
  }
  if (spec.filter != nullptr) {
    int listener = InstallFilter(*spec.filter);
    if (listener < 0) Fail(spec, ChildStage::kSetup, -listener, "seccomp");
    if (listener > 0) {
      const char byte = 'L';
      if (int rc = SendFdRawErrno(spec.notify_sock, &byte, 1, listener); rc != 0) {
        Fail(spec, ChildStage::kSetup, -rc, "send listener");
      }
      ::close(listener);
    }
  }
  ::execve(spec.path, spec.argv, spec.envp);
  Fail(spec, ChildStage::kExec, errno, "execve");
}

namespace {

int ChildMain(void* spec) { RunChild(*static_cast<const ChildSpec*>(spec)); }

}  // namespace

pid_t SpawnChild(const ChildSpec& spec) {
  // RunChild needs a few kilobytes: libcap, sendmsg, execve.
  constexpr size_t kStack = 128 * 1024;
  void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return -errno;
  // Every signal blocked across the clone: a handler of the parent's must
  // not run in a child that shares its memory. RunChild resets the
  // dispositions, then unblocks.
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = ::clone(ChildMain, static_cast<char*>(stack) + kStack,
                      CLONE_VM | CLONE_VFORK | SIGCHLD, const_cast<ChildSpec*>(&spec));
  int err = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::munmap(stack, kStack);
  return pid < 0 ? -err : pid;
}

}  // namespace cordon::supervisor
