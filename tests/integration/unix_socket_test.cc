// Unix sockets, under network none and allow: the tool reaches socket names
// beneath what it may write and nothing else (supervisor/emulator_socket.cc).
// A root tool that could connect to the host's daemons (systemd, D-Bus,
// docker, cordon policyd) could act outside the sandbox through them.
// Ground truth is the listener's side: whether a connection arrived, and
// whether a name appeared on disk.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "base/fd.h"
#include "tests/support/probe_test.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;

// A listening AF_UNIX stream socket at `name` (a leading '@' makes it
// abstract), non-blocking so a test can ask whether anyone connected.
Fd Listen(const std::string& name, int backlog = 8) {
  Fd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  std::memcpy(sun.sun_path, name.data(), name.size());
  if (name[0] == '@') sun.sun_path[0] = '\0';
  auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
  EXPECT_EQ(::bind(s.get(), reinterpret_cast<sockaddr*>(&sun), len), 0) << name;
  EXPECT_EQ(::listen(s.get(), backlog), 0);
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
  void OutsideIsUnreachable();
  void InsideWorks();
  void ProtectedNamesStayUnmade();
  void BlockingConnectHoldsUpNothing();
};

TEST_P(UnixSocketTest, NamesOutsideTheWritablePathsAreUnreachable) { OutsideIsUnreachable(); }
TEST_P(UnixSocketTest, NamesInTheWorkspaceWork) { InsideWorks(); }
TEST_P(UnixSocketTest, BindCannotMakeAProtectedName) { ProtectedNamesStayUnmade(); }
TEST_P(UnixSocketTest, ABlockingConnectHoldsUpNothingElse) { BlockingConnectHoldsUpNothing(); }

// The same, started as in a Docker container with the default seccomp
// profile (tests/helpers/container_launcher.c): no pidfd_getfd, so the
// calls are made on a stand-in socket installed over the tool's
// (supervisor/socket_stand_in.h), with the same checks.
TEST_P(UnixSocketTest, NamesOutsideTheWritablePathsAreUnreachableInAContainer) {
  launcher_ = CONTAINER_LAUNCHER;
  OutsideIsUnreachable();
}
TEST_P(UnixSocketTest, NamesInTheWorkspaceWorkInAContainer) {
  launcher_ = CONTAINER_LAUNCHER;
  InsideWorks();
}
TEST_P(UnixSocketTest, BindCannotMakeAProtectedNameInAContainer) {
  launcher_ = CONTAINER_LAUNCHER;
  ProtectedNamesStayUnmade();
}
TEST_P(UnixSocketTest, ABlockingConnectHoldsUpNothingElseInAContainer) {
  launcher_ = CONTAINER_LAUNCHER;
  BlockingConnectHoldsUpNothing();
}

void UnixSocketTest::OutsideIsUnreachable() {
  std::string outside = t_.Out("host.sock");
  Fd host = Listen(outside);
  std::string abstract = "cordon-test-" + std::to_string(::getpid());
  Fd host_abstract = Listen("@" + abstract);
  // A symlink in the workspace to the host's socket, and a hard link to it
  // planted before the run.
  ASSERT_EQ(::symlink(outside.c_str(), t_.Ws("link.sock").c_str()), 0);
  ASSERT_EQ(::link(outside.c_str(), t_.Ws("alias.sock").c_str()), 0);
  // Network allow opens the network, not the host's daemons.
  for (const char* network : {"none", "allow"}) {
    SCOPED_TRACE(network);
    std::vector<std::string> net = {"--network", network};
    EXPECT_EQ(Probe("workspace-write", {"connect-unix", outside}, net), EACCES) << last_.err;
    EXPECT_FALSE(Connected(host)) << "the host's listener must see no connection";
    EXPECT_EQ(Probe("workspace-write", {"connect-abstract", abstract}, net), EACCES) << last_.err;
    EXPECT_FALSE(Connected(host_abstract));
    EXPECT_EQ(Probe("workspace-write", {"connect-unix", "link.sock"}, net), EACCES) << last_.err;
    EXPECT_FALSE(Connected(host));
    EXPECT_EQ(Probe("workspace-write", {"connect-unix", "alias.sock"}, net), EACCES) << last_.err;
    EXPECT_FALSE(Connected(host));
    EXPECT_EQ(Probe("workspace-write", {"bind-unix", t_.Out("new.sock")}, net), EACCES)
        << last_.err;
    EXPECT_FALSE(Exists(t_.Out("new.sock")));
  }
}

void UnixSocketTest::InsideWorks() {
  Fd host = Listen(t_.Ws("host.sock"));
  EXPECT_EQ(Probe("workspace-write", {"connect-unix", "host.sock"}), 0) << last_.err;
  EXPECT_TRUE(Connected(host)) << "a listener in the workspace is reachable";
  EXPECT_EQ(Probe("workspace-write", {"connect-unix", "host.sock"}, {"--network", "allow"}), 0)
      << last_.err;
  EXPECT_TRUE(Connected(host));
  EXPECT_EQ(Probe("workspace-write", {"connect-unix", "absent.sock"}), ENOENT);
  EXPECT_EQ(Probe("workspace-write", {"connect-unix", "inside.txt"}), ECONNREFUSED);
  EXPECT_EQ(Probe("workspace-write", {"unix-echo", "own.sock"}), 0) << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("own.sock"))) << "the tool's own bound name stays, as bare";
  EXPECT_EQ(Probe("workspace-write", {"unix-echo", "own.sock"}), EADDRINUSE);
  // Under read-only the workspace takes no new name.
  EXPECT_EQ(Probe("", {"bind-unix", "ro.sock"}), EACCES) << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("ro.sock")));
}

void UnixSocketTest::ProtectedNamesStayUnmade() {
  ASSERT_EQ(::mkdir(t_.Ws(".git").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(t_.Ws(".git/hooks").c_str(), 0755), 0);
  for (const char* name : {".envrc", ".git/hooks/pre-commit"}) {
    EXPECT_EQ(Probe("workspace-write", {"bind-unix", name}), EACCES) << name << last_.err;
    EXPECT_FALSE(Exists(t_.Ws(name))) << name;
  }
  EXPECT_EQ(Probe("workspace-write", {"bind-unix", "fine.sock"}), 0) << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("fine.sock")));
}

TEST_P(UnixSocketTest, DatagramSocketsAreRefused) {
  for (const char* network : {"none", "allow"}) {
    EXPECT_EQ(Probe("", {"unix-dgram"}, {"--network", network}), EPERM) << network;
    EXPECT_EQ(Probe("", {"unix-dgram-pair"}, {"--network", network}), EPERM) << network;
    EXPECT_EQ(Probe("", {"unix-dgram-high"}, {"--network", network}), EPERM) << network;
  }
  // Streams, the honest neighbour, stay open (NamesInTheWorkspaceWork).
}

// A connect that waits (the listener's backlog is full) runs where it holds
// up no other call of the tool, and cordon still ends with the tool.
void UnixSocketTest::BlockingConnectHoldsUpNothing() {
  Fd full = Listen(t_.Ws("full.sock"), 0);
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  std::string name = t_.Ws("full.sock");
  std::memcpy(sun.sun_path, name.data(), name.size());
  Fd first(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(::connect(first.get(), reinterpret_cast<sockaddr*>(&sun), sizeof sun), 0);
  // If cordon hangs on the connect, drain the backlog after 20 s so the
  // test ends (and fails) instead of hanging.
  std::atomic<bool> done{false}, rescued{false};
  std::thread watchdog([&] {
    for (int i = 0; i < 200 && !done.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (done.load()) return;
    rescued.store(true);
    ::shutdown(full.get(), SHUT_RDWR);
    while (!done.load()) {
      Fd c(::accept4(full.get(), nullptr, nullptr, SOCK_CLOEXEC));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  int status = Probe("workspace-write", {"connect-stuck", "full.sock"});
  done.store(true);
  watchdog.join();
  EXPECT_EQ(status, 0) << "the other call waited behind the connect (SIGALRM is 142)\n"
                       << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("made-while-stuck")));
  EXPECT_FALSE(rescued.load()) << "cordon did not end until the connect was let through";
}

INSTANTIATE_TEST_SUITE_P(Probes, UnixSocketTest, ProbeParams(), ProbeParamName);

// A bound socket's address is the path the tool wrote (getsockname), not
// the supervisor's /proc/self/fd/N/NAME (supervisor/socket_bind.h):
// Python's multiprocessing hands its listener's address to the processes
// that connect, so a Manager and a Listener work, under workspace-write and
// under the default profile (the run's TMPDIR). A name reached through a
// link to outside stays refused. In a container with Docker's default
// seccomp profile no namespace can be made: the address is the old one,
// and cordon says so once a run at --log-level info.
TEST(UnixSocketNameTest, PythonsMultiprocessingConnectsToItsListener) {
  if (!HavePython()) GTEST_SKIP() << "no /usr/bin/python3";
  ScratchTree t;
  const std::string script =
      "import multiprocessing as m, os, socket, sys\n"
      "from multiprocessing.connection import Listener, Client\n"
      "import threading\n"
      "if __name__ == '__main__':\n"
      "  if len(sys.argv) > 1:\n"
      "    s = socket.socket(socket.AF_UNIX); s.bind(os.getcwd() + '/s.sock')\n"
      "    print('name', s.getsockname())\n"
      "    try:\n"
      "      socket.socket(socket.AF_UNIX).bind('out/s.sock'); print('bound out')\n"
      "    except OSError as e: print('out', e.errno)\n"
      "  mgr = m.Manager(); d = mgr.dict(); d[1] = 2; print('manager', d[1])\n"
      "  l = Listener()\n"
      "  threading.Thread(target=lambda: Client(l.address).send(5)).start()\n"
      "  print('listener', l.accept().recv())\n";
  ASSERT_EQ(::symlink(t.outside().c_str(), t.Ws("out").c_str()), 0);
  for (bool write : {true, false}) {
    SCOPED_TRACE(write ? "workspace-write" : "default profile");
    std::vector<std::string> args = {"--log-level", "info", "run", "--workspace", t.ws()};
    if (write) args.insert(args.end(), {"--profile", "workspace-write"});
    args.insert(args.end(), {"--", "/usr/bin/python3", "-c", script});
    if (write) args.push_back("names");
    RunResult r = RunCordon(args);
    if (InContainerPass()) {
      EXPECT_THAT(r.err, HasSubstr("shows /proc/self/fd/N/NAME as its address")) << r.err;
      continue;
    }
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("manager 2")) << r.err;
    EXPECT_THAT(r.out, HasSubstr("listener 5")) << r.err;
    if (write) {
      EXPECT_THAT(r.out, HasSubstr("name " + t.Ws("s.sock") + "\n")) << r.err;
      EXPECT_TRUE(Exists(t.Ws("s.sock")));
      EXPECT_THAT(r.out, HasSubstr("out 13")) << r.err;
      EXPECT_FALSE(Exists(t.Out("s.sock")));
    }
  }
}

}  // namespace
}  // namespace cordon::testing
