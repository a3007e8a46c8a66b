// Unix sockets under network none: the tool reaches socket names beneath
// what it may write and nothing else (supervisor/emulator_socket.cc). A
// root tool that could connect to the host's daemons (systemd, D-Bus,
// docker, cordon policyd) could act outside the sandbox through them.
// Ground truth is the listener's side: whether a connection arrived, and
// whether a name appeared on disk.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "policy/fd.h"
#include "tests/support/probe_test.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

// A listening AF_UNIX stream socket at `name` (a leading '@' makes it
// abstract), non-blocking so a test can ask whether anyone connected.
Fd Listen(const std::string& name) {
  Fd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  std::memcpy(sun.sun_path, name.data(), name.size());
  if (name[0] == '@') sun.sun_path[0] = '\0';
  auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
  EXPECT_EQ(::bind(s.get(), reinterpret_cast<sockaddr*>(&sun), len), 0) << name;
  EXPECT_EQ(::listen(s.get(), 8), 0);
  return s;
}

// Whether a connection is waiting on `listener`.
bool Connected(const Fd& listener) {
  Fd c(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  return c.valid();
}

class UnixSocketTest : public ProbeTest {
 protected:
  void SetUp() override { WriteFile(t_.Ws("inside.txt"), "inside\n"); }
};

TEST_P(UnixSocketTest, NamesOutsideTheWritablePathsAreUnreachable) {
  std::string outside = t_.Out("host.sock");
  Fd host = Listen(outside);
  std::string abstract = "cordon-test-" + std::to_string(::getpid());
  Fd host_abstract = Listen("@" + abstract);
  EXPECT_EQ(Probe("workspace-write", {"connect-unix", outside}), EACCES) << last_.err;
  EXPECT_FALSE(Connected(host)) << "the host's listener must see no connection";
  EXPECT_EQ(Probe("workspace-write", {"connect-abstract", abstract}), EACCES) << last_.err;
  EXPECT_FALSE(Connected(host_abstract));
  // A symlink in the workspace to the host's socket leads nowhere either.
  ASSERT_EQ(::symlink(outside.c_str(), t_.Ws("link.sock").c_str()), 0);
  EXPECT_EQ(Probe("workspace-write", {"connect-unix", "link.sock"}), EACCES) << last_.err;
  EXPECT_FALSE(Connected(host));
  // Nor does a hard link to it planted before the run.
  ASSERT_EQ(::link(outside.c_str(), t_.Ws("alias.sock").c_str()), 0);
  EXPECT_EQ(Probe("workspace-write", {"connect-unix", "alias.sock"}), EACCES) << last_.err;
  EXPECT_FALSE(Connected(host));
  EXPECT_EQ(Probe("workspace-write", {"bind-unix", t_.Out("new.sock")}), EACCES) << last_.err;
  EXPECT_FALSE(Exists(t_.Out("new.sock")));
  // network allow opens the host's sockets as it opens TCP (README, limits).
  EXPECT_EQ(Probe("workspace-write", {"connect-unix", outside}, {"--network", "allow"}), 0)
      << last_.err;
  EXPECT_TRUE(Connected(host));
}

TEST_P(UnixSocketTest, NamesInTheWorkspaceWork) {
  Fd host = Listen(t_.Ws("host.sock"));
  EXPECT_EQ(Probe("workspace-write", {"connect-unix", "host.sock"}), 0) << last_.err;
  EXPECT_TRUE(Connected(host)) << "a listener in the workspace is reachable";
  EXPECT_EQ(Probe("workspace-write", {"connect-unix", "absent.sock"}), ENOENT);
  EXPECT_EQ(Probe("workspace-write", {"connect-unix", "inside.txt"}), ECONNREFUSED);
  EXPECT_EQ(Probe("workspace-write", {"unix-echo", "own.sock"}), 0) << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("own.sock"))) << "the tool's own bound name stays, as bare";
  EXPECT_EQ(Probe("workspace-write", {"unix-echo", "own.sock"}), EADDRINUSE);
  // Under read-only the workspace takes no new name.
  EXPECT_EQ(Probe("", {"bind-unix", "ro.sock"}), EACCES) << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("ro.sock")));
}

TEST_P(UnixSocketTest, BindCannotMakeAProtectedName) {
  ASSERT_EQ(::mkdir(t_.Ws(".git").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(t_.Ws(".git/hooks").c_str(), 0755), 0);
  for (const char* name : {".envrc", ".git/hooks/pre-commit"}) {
    EXPECT_EQ(Probe("workspace-write", {"bind-unix", name}), EACCES) << name << last_.err;
    EXPECT_FALSE(Exists(t_.Ws(name))) << name;
  }
  EXPECT_EQ(Probe("workspace-write", {"bind-unix", "fine.sock"}), 0) << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("fine.sock")));
}

TEST_P(UnixSocketTest, DatagramSocketsAreRefusedUnderNetworkNone) {
  EXPECT_EQ(Probe("", {"unix-dgram"}), EPERM);
  EXPECT_EQ(Probe("", {"unix-dgram-pair"}), EPERM);
  EXPECT_EQ(Probe("", {"unix-dgram"}, {"--network", "allow"}), 0) << last_.err;
  EXPECT_EQ(Probe("", {"unix-dgram-pair"}, {"--network", "allow"}), 0) << last_.err;
}

INSTANTIATE_TEST_SUITE_P(Probes, UnixSocketTest, ProbeParams(), ProbeParamName);

}  // namespace
}  // namespace cordon::testing
