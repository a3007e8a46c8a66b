// Test support: a scratch tree with a workspace and an outside directory,
// and a runner for the real cordon binary that captures its exit status and
// stderr. Everything real: no mocks of the kernel.
#pragma once

#include <string>
#include <vector>

namespace cordon::testing {

// Creates /tmp/cordon-test-XXXXXX/{ws,outside} (beneath $CORDON_TEST_TMPDIR,
// the run's directory, when set: see gtest_main.cc); removes it in the dtor.
class ScratchTree {
 public:
  ScratchTree();
  ~ScratchTree();
  ScratchTree(const ScratchTree&) = delete;
  ScratchTree& operator=(const ScratchTree&) = delete;

  const std::string& root() const { return root_; }
  std::string ws() const { return root_ + "/ws"; }
  std::string outside() const { return root_ + "/outside"; }
  std::string Ws(const std::string& rel) const { return ws() + "/" + rel; }
  std::string Out(const std::string& rel) const { return outside() + "/" + rel; }

 private:
  std::string root_;
};

struct RunResult {
  int status = -1;  // cordon's exit status
  std::string out;
  std::string err;
};

// The command that starts cordon (`bin`): behind $CORDON_TEST_LAUNCHER when
// that is set, as in the integration suite's `moby` pass, which runs every
// test with cordon under Docker's default seccomp profile and capability set
// (tests/helpers/container_launcher.c, issue 28).
std::vector<std::string> CordonCommand(const std::string& bin = CORDON_BIN);
// True in the `moby` pass (CORDON_TEST_LAUNCHER set): tests there expect
// what the README says a tool meets in such a container.
bool InContainerPass();
// The same as one shell word list, each word single-quoted.
std::string CordonShellCommand();
// In a forked child: execs `cmd` then `args`; exits 112 if it cannot.
[[noreturn]] void ExecArgv(std::vector<std::string> cmd, const std::vector<std::string>& args);
// In a forked child: execs `CordonCommand() ARGS...`; exits 112 if it cannot.
[[noreturn]] void ExecCordon(const std::vector<std::string>& args);

// Runs `cordon ARGS...` with cwd `cwd` (empty: inherit) and stdin /dev/null;
// through `launcher` (`LAUNCHER cordon ARGS...`) when one is given, else
// through $CORDON_TEST_LAUNCHER (CordonCommand).
RunResult RunCordon(const std::vector<std::string>& args, const std::string& cwd = "",
                    const std::vector<std::string>& extra_env = {},
                    const std::string& launcher = "");

// The same with the test build of cordon (tools/test_hooks.h), which
// honours CORDON_TEST_PUBLIC_RANGE and CORDON_TEST_RESOLVER.
RunResult RunCordonTestBuild(const std::vector<std::string>& args, const std::string& cwd = "",
                             const std::vector<std::string>& extra_env = {});

// The environment of a test's git: a fixed author and committer, no system
// or user config (HOME=/nonexistent).
std::vector<std::string> GitTestEnv();

// How many lines `s` holds (its newline characters): cordon's messages are
// one line each, and tests count them on stderr.
int Lines(const std::string& s);

// Runs `cmd` with sh outside the sandbox, with `env` (NAME=VALUE each)
// added: its stdout and stderr, trailing newlines cut. For the ground truth
// a test reads with real tools (git log).
std::string ShOutput(const std::string& cmd, const std::vector<std::string>& env = {});

// Small file helpers for ground-truth checks from outside the sandbox.
void WriteFile(const std::string& path, const std::string& content);
std::string ReadFile(const std::string& path);  // "<missing>" when absent
bool Exists(const std::string& path);
// The names in `dir` (no "." or ".."), sorted; none when it is missing.
std::vector<std::string> ListDir(const std::string& dir);

// The private TMPDIR of the run whose cordon is `cordon` (read from its
// tool's environment; empty if none). A SIGKILLed cordon leaves it behind
// until another run ends and sweeps it.
std::string RunTmpdir(int cordon);
// What every private TMPDIR's path starts with: /tmp/cordon-runs-UID/run-.
std::string PrivateTmpPrefix();

// Whether /usr/bin/python3 is there to run (tests that drive a Python tool
// skip, saying so, where it is not).
bool HavePython();

// The directory holding the probe binaries (granted read-only to tools).
std::string ProbeDir();

}  // namespace cordon::testing
