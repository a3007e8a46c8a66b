#include "tests/support/child_process.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

int Reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

// In the child: `fd` onto `target`, or /dev/null when it is -1.
void Redirect(int fd, int target, int devnull_flags) {
  if (fd < 0) fd = ::open("/dev/null", devnull_flags | O_CLOEXEC);
  if (fd >= 0 && fd != target) ::dup2(fd, target);
}

bool Accepts(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

int InChild(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) ::_exit(body());
  const int status = Reap(pid);
  return status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int InPrivateMountNamespace(const std::function<int()>& body) {
  return InChild([&body] {
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      return kChildSetupFailed;
    }
    return body();
  });
}

int AsNobody(const std::function<int()>& body) {
  return InChild([&body] {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
        ::setresuid(65534, 65534, 65534) != 0) {
      return kChildSetupFailed;
    }
    return body();
  });
}

BackgroundCordon::BackgroundCordon(const std::vector<std::string>& args, const ChildIo& io) {
  pid_ = ::fork();
  if (pid_ != 0) return;
  Redirect(io.in, 0, O_RDONLY);
  Redirect(io.out, 1, O_WRONLY);
  if (!io.err_file.empty()) {
    Redirect(::open(io.err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), 2,
             O_WRONLY);
  }
  if (!io.cwd.empty() && ::chdir(io.cwd.c_str()) != 0) ::_exit(111);
  for (const std::string& v : io.env) ::putenv(::strdup(v.c_str()));
  ExecCordon(args);
}

BackgroundCordon::~BackgroundCordon() {
  if (pid_ > 0) Stop(SIGKILL);
}

int BackgroundCordon::Stop(int sig) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, sig);
  return Wait();
}

int BackgroundCordon::Wait() {
  if (pid_ <= 0) return -1;
  const int status = Reap(pid_);
  pid_ = -1;
  return status;
}

PolicyDaemon::PolicyDaemon(std::string socket, const std::vector<std::string>& more)
    : socket_(std::move(socket)) {
  std::vector<std::string> args = {"policyd", "--socket", socket_};
  args.insert(args.end(), more.begin(), more.end());
  pid_ = ::fork();
  // Outside the container pass's launcher: the service is the host's.
  if (pid_ == 0) ExecArgv({CORDON_BIN}, args);
  for (int i = 0; pid_ > 0 && i < 500 && !up_; ++i) {
    up_ = Accepts(socket_);
    if (!up_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

PolicyDaemon::~PolicyDaemon() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  Reap(pid_);
}

void PolicyDaemon::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  Reap(pid_);
  pid_ = -1;
  up_ = false;
}

}  // namespace cordon::testing
