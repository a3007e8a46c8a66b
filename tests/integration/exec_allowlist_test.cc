// The exec allowlist end to end: with tools pinned, Landlock grants EXECUTE
// only on the pinned binaries and what they map, so even a static program
// calling execve directly cannot run an unlisted binary, and a pinned
// binary replaced by another inode at its path cannot run either.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <functional>
#include <thread>

#include <cerrno>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

constexpr const char* kRg = "/usr/bin/rg";

RunResult RunPinned(const ScratchTree& t, std::vector<std::string> opts, std::vector<std::string> cmd) {
  std::vector<std::string> args = {"run", "--workspace", t.ws(), "--ro", ProbeDir()};
  args.insert(args.end(), opts.begin(), opts.end());
  args.push_back("--");
  args.insert(args.end(), cmd.begin(), cmd.end());
  return RunCordon(args);
}

// The pins' SHA-256 needs no configured OpenSSL provider: an openssl.cnf
// (here the caller's OPENSSL_CONF) naming a provider that is not installed
// stops nothing, and the audit log still records each pin's digest.
TEST(ExecAllowlist, ABrokenOpensslConfigDoesNotStopThePinsHash) {
  ScratchTree t;
  const std::string cnf = t.Out("broken.cnf");
  WriteFile(cnf,
            "openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n"
            "[provider_sect]\nabsent = absent_sect\n[absent_sect]\nactivate = 1\n");
  const std::string audit = t.Out("audit.log");
  RunResult r = RunCordon(
      {"run", "--workspace", t.ws(), "--audit", audit, "--tool=true=/bin/true", "--", "/bin/true"},
      "", {"OPENSSL_CONF=" + cnf});
  EXPECT_EQ(r.status, 0) << r.err;
  std::string log = ReadFile(audit);
  size_t at = log.find("\"sha256\":\"");
  ASSERT_NE(at, std::string::npos) << log.substr(0, 2000);
  std::string digest = log.substr(at + 10, 64);
  EXPECT_EQ(digest.find_first_not_of("0123456789abcdef"), std::string::npos) << digest;
}

TEST(ExecAllowlist, UnlistedBinaryCannotBeExecutedEvenByAStaticProgram) {
  ScratchTree t;
  const std::string pin_probe = std::string("--tool=probe=") + PROBE_STATIC;
  RunResult open = RunPinned(t, {}, {PROBE_STATIC, "exec", "/usr/bin/id"});
  EXPECT_EQ(open.status, 0) << "no allowlist: exec from the read-only set as before; " << open.err;

  RunResult refused = RunPinned(t, {pin_probe}, {PROBE_STATIC, "exec", "/usr/bin/id"});
  EXPECT_EQ(refused.status, EACCES) << refused.err;

  RunResult listed = RunPinned(t, {pin_probe, "--tool=id=/usr/bin/id"}, {PROBE_STATIC, "exec", "/usr/bin/id"});
  EXPECT_EQ(listed.status, 0) << "a listed one runs: " << listed.err;
  EXPECT_NE(listed.out.find("uid="), std::string::npos);

  // A copy in a memfd, exec'd by fd, has no name to be pinned by.
  RunResult copy = RunPinned(t, {pin_probe, "--tool=id=/usr/bin/id"},
                             {PROBE_STATIC, "memfd-exec", "/usr/bin/id"});
  EXPECT_EQ(copy.status, EACCES) << copy.err;
  EXPECT_EQ(copy.out.find("uid="), std::string::npos);
}

// The pin's hash is the supervisor's read: a pinned binary the tool may
// execute but not read (another user's, mode 0711) runs.
TEST(ExecAllowlist, APinnedBinaryTheToolMayRunButNotReadRuns) {
  ScratchTree t;
  const std::string id = t.Out("id");
  WriteFile(id, ReadFile("/usr/bin/id"));
  if (::geteuid() != 0 || ::chown(id.c_str(), 65534, 65534) != 0) {
    GTEST_SKIP() << "SKIPPED LOUDLY: needs root to give the binary to uid 65534";
  }
  ASSERT_EQ(::chmod(id.c_str(), 0711), 0);  // the capless root tool: execute only
  RunResult r = RunPinned(t, {std::string("--tool=probe=") + PROBE_STATIC, "--tool=id=" + id},
                          {PROBE_STATIC, "exec", id});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("uid="), std::string::npos) << r.out;
}

// With pins, the supervisor hashes what an exec would load: a FIFO there is
// refused at once, not waited on (the notify thread would wait with it).
TEST(ExecAllowlist, AFifoIsRefusedWithoutWaiting) {
  ScratchTree t;
  ASSERT_EQ(::mkfifo(t.Ws("fifo").c_str(), 0755), 0);
  const std::string pin_probe = std::string("--tool=probe=") + PROBE_STATIC;
  RunResult r = RunPinned(t, {pin_probe}, {PROBE_STATIC, "exec", t.Ws("fifo")});
  EXPECT_EQ(r.status, EACCES) << r.err;
}

TEST(ExecAllowlist, ThePinnedToolItselfMustBeListed) {
  ScratchTree t;
  RunResult r = RunPinned(t, {"--tool=id=/usr/bin/id"}, {PROBE_STATIC, "exit", "0"});
  EXPECT_EQ(r.status, 126) << r.err;
  RunResult bad = RunPinned(t, {"--tool=x=relative"}, {"/usr/bin/id"});
  EXPECT_EQ(bad.status, 125) << "a bad pin is a bad policy";
  RunResult missing = RunPinned(t, {"--tool=x=/nonexistent/tool"}, {"/usr/bin/id"});
  EXPECT_EQ(missing.status, 125);
}

TEST(ExecAllowlist, ThePinnedBinaryCannotBeReplacedFromInside) {
  if (::access(kRg, X_OK) != 0) GTEST_SKIP() << "ripgrep not installed";
  ScratchTree t;
  std::string rg = t.Ws("rg");
  ASSERT_EQ(std::system(("cp " + std::string(kRg) + " '" + rg + "' && cp " + kRg + " '" +
                         t.Ws("rg.new") + "'").c_str()),
            0);
  std::string probe = PROBE_DYNAMIC;
  std::vector<std::string> pins = {"--profile", "workspace-write", "--tool=sh=/bin/sh",
                                   "--tool=probe=" + probe, "--tool=rg=" + rg};
  RunResult honest = RunPinned(t, pins, {"/bin/sh", "-c", "exec ./rg --version"});
  EXPECT_EQ(honest.status, 0) << "the pinned copy runs: " << honest.err;
  EXPECT_NE(honest.out.find("ripgrep"), std::string::npos);
  struct stat before;
  ASSERT_EQ(::stat(rg.c_str(), &before), 0);
  RunResult swap = RunPinned(t, pins, {probe, "rename", "rg.new", "rg"});
  EXPECT_EQ(swap.status, EACCES) << "a pinned file is read-only to the tool";
  struct stat after;
  ASSERT_EQ(::stat(rg.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  RunResult other = RunPinned(t, pins, {probe, "rename", "rg.new", "rg.moved"});
  EXPECT_EQ(other.status, 0) << "renames next to it still work: " << other.err;
}

// Runs a pinned shell that waits for "go" in its workspace and then execs
// `rg`; `change` is applied in between, after the policy was loaded.
RunResult ExecAfterChange(ScratchTree& t, const std::vector<std::string>& pins,
                          const std::string& rg, const std::function<void()>& change) {
  std::string script = ": > started; while [ ! -e go ]; do :; done; exec " + rg + " --version";
  RunResult r;
  std::thread run([&] { r = RunPinned(t, pins, {"/bin/sh", "-c", script}); });
  for (int i = 0; i < 3000 && !Exists(t.Ws("started")); ++i) ::usleep(10000);
  EXPECT_TRUE(Exists(t.Ws("started")));
  change();
  WriteFile(t.Ws("go"), "");
  run.join();
  return r;
}

TEST(ExecAllowlist, BinaryReplacedAfterPolicyLoadIsRefused) {
  if (::access(kRg, X_OK) != 0) GTEST_SKIP() << "ripgrep not installed";
  ScratchTree t;
  std::string rg = t.Out("rg");
  ASSERT_EQ(std::system(("cp " + std::string(kRg) + " '" + rg + "' && cp " + kRg + " '" +
                         t.Out("rg.new") + "'").c_str()),
            0);
  // The tool waits for "go" in its workspace, then execs the pinned path;
  // meanwhile, outside, the same bytes land at that path as a new inode.
  std::vector<std::string> pins = {"--profile", "workspace-write", "--tool=sh=/bin/sh",
                                   "--tool=rg=" + rg};
  RunResult r = ExecAfterChange(t, pins, rg, [&] {
    EXPECT_EQ(::rename(t.Out("rg.new").c_str(), rg.c_str()), 0);
  });
  EXPECT_EQ(r.status, 126) << r.out << r.err;
  EXPECT_EQ(r.out.find("ripgrep"), std::string::npos) << "the replaced binary never ran";

  // A run whose policy is loaded after the swap pins the new inode: it runs.
  RunResult repinned = RunPinned(t, pins, {"/bin/sh", "-c", "exec " + rg + " --version"});
  EXPECT_EQ(repinned.status, 0) << repinned.err;
}

TEST(ExecAllowlist, SameInodeWithOtherBytesAfterPolicyLoadIsRefused) {
  if (::access(kRg, X_OK) != 0) GTEST_SKIP() << "ripgrep not installed";
  ScratchTree t;
  std::string rg = t.Out("rg");
  ASSERT_EQ(std::system(("cp " + std::string(kRg) + " '" + rg + "'").c_str()), 0);
  std::vector<std::string> pins = {"--profile", "workspace-write", "--tool=sh=/bin/sh",
                                   "--tool=rg=" + rg};
  RunResult r = ExecAfterChange(t, pins, rg, [&] {
    // Bytes in the ELF header's padding: still a runnable ripgrep, same
    // inode, same size, mtime put back. Only the hash can tell.
    struct stat before;
    ASSERT_EQ(::stat(rg.c_str(), &before), 0);
    int fd = ::open(rg.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(::pwrite(fd, "EVIL", 4, 10), 4);
    ::close(fd);
    struct timespec times[2] = {before.st_atim, before.st_mtim};
    ASSERT_EQ(::utimensat(AT_FDCWD, rg.c_str(), times, 0), 0);
  });
  EXPECT_EQ(r.status, 126) << r.out << r.err;
  EXPECT_EQ(r.out.find("ripgrep"), std::string::npos) << "the modified binary never ran";

  // The modified copy still runs when it is what the policy pins.
  RunResult repinned = RunPinned(t, pins, {"/bin/sh", "-c", "exec " + rg + " --version"});
  EXPECT_EQ(repinned.status, 0) << repinned.err;
  EXPECT_NE(repinned.out.find("ripgrep"), std::string::npos);
}

}  // namespace
}  // namespace cordon::testing
