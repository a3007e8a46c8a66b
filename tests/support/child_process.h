// Test support: the processes a test starts beside itself, each reaped when
// it goes out of scope so that no test leaves one behind: a forked body (in a
// private mount namespace, or as another user), cordon in the background,
// and the policy service. Everything real: a fork, the real binaries.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace cordon::testing {

// What a forked body's exit status says when the test cannot be set up
// there (unshare, mount, setresuid failed): the caller skips, loudly.
inline constexpr int kChildSetupFailed = 199;

// Forks; the child runs `body` and _exits with what it returns (gtest's
// assertions do not reach the parent from there: a body says what failed by
// its status). Returns that status, or -1 when the child did not exit (a
// signal) or could not be forked.
int InChild(const std::function<int()>& body);

// InChild in a mount namespace of the child's own, / made private: what the
// body mounts (a tmpfs, a bind over a system binary) is seen by nobody
// else. kChildSetupFailed when the namespace cannot be made here.
int InPrivateMountNamespace(const std::function<int()>& body);

// InChild as uid and gid 65534 (nobody), all three ids of each, no
// supplementary groups; kChildSetupFailed when they cannot be taken (not
// root).
int AsNobody(const std::function<int()>& body);

// Where a background cordon's standard streams go. -1: /dev/null (stdin,
// stdout) or the test's own (stderr, so that what cordon says reaches the
// test's log). The descriptors are the caller's; the child gets copies.
struct ChildIo {
  int in = -1;
  int out = -1;
  std::string err_file;          // empty: the test's stderr
  std::string cwd;               // empty: the test's
  std::vector<std::string> env;  // NAME=VALUE added to the test's environment
};

// `cordon ARGS...` (CordonCommand, test_env.h) started in the background.
// Killed with SIGKILL and reaped when it goes out of scope, unless it was
// waited for.
class BackgroundCordon {
 public:
  explicit BackgroundCordon(const std::vector<std::string>& args, const ChildIo& io = {});
  ~BackgroundCordon();
  BackgroundCordon(const BackgroundCordon&) = delete;
  BackgroundCordon& operator=(const BackgroundCordon&) = delete;

  pid_t pid() const { return pid_; }
  bool started() const { return pid_ > 0; }
  // Sends `sig`; then waits and returns the wait status (Wait).
  int Stop(int sig);
  // Waits for it to end; its wait status (-1 if it was never started or
  // was already waited for).
  int Wait();

 private:
  pid_t pid_ = -1;
};

// `cordon policyd --socket SOCKET MORE...` in the background; the
// constructor returns once the socket accepts a connection (up()) or after
// five seconds (not up). Stopped with SIGTERM and reaped at scope end.
class PolicyDaemon {
 public:
  explicit PolicyDaemon(std::string socket, const std::vector<std::string>& more = {});
  ~PolicyDaemon();
  PolicyDaemon(const PolicyDaemon&) = delete;
  PolicyDaemon& operator=(const PolicyDaemon&) = delete;

  bool up() const { return up_; }
  const std::string& socket() const { return socket_; }
  // Ends it now with SIGKILL (a service that dies while a run asks it).
  void Kill();

 private:
  std::string socket_;
  pid_t pid_ = -1;
  bool up_ = false;
};

}  // namespace cordon::testing
