// The tool's own loopback under network none (policy/loopback.h, issue 25
// item 5): a server and a client of one run talk over TCP on 127.0.0.1 and
// ::1; a listener of the host (this test process, outside the run) is
// refused, also on a port the tool had bound and closed before the host
// took it. Ground truth is the host listener's side: whether a connection
// arrived.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "base/fd.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

// The tool: python3 with a mode. Every wait is bounded.
constexpr const char* kTool = R"PY(
import errno, os, socket, sys, threading, time
mode, v = sys.argv[1], sys.argv[2]
fam, host = (socket.AF_INET, '127.0.0.1') if v == '4' else (socket.AF_INET6, '::1')
def name(f):
    try:
        f()
        return 'ok'
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
def listener(h=host, port=0):
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.bind((h, port))
    s.listen(4)
    return s
def echo_once(srv):
    c, _ = srv.accept()
    c.sendall(c.recv(16).upper())
    c.close()
def ask(port):
    c = socket.create_connection((host, port), timeout=10)
    c.sendall(b'ping')
    return c.recv(16).decode()
if mode == 'talk':  # server thread and client in one process
    srv = listener()
    t = threading.Thread(target=echo_once, args=(srv,))
    t.start()
    print(ask(srv.getsockname()[1]))
    t.join()
elif mode == 'talk-child':  # the listener held by another process of the run only
    srv = listener()
    port = srv.getsockname()[1]
    pid = os.fork()
    if pid == 0:
        echo_once(srv)
        os._exit(0)
    srv.close()
    print(ask(port))
    os.waitpid(pid, 0)
elif mode == 'connect':
    print(name(lambda: socket.create_connection((host, int(sys.argv[3])), timeout=5)))
elif mode == 'connect-blocking':
    s = socket.socket(fam, socket.SOCK_STREAM)
    print(name(lambda: s.connect((host, int(sys.argv[3])))))
elif mode == 'rebind':  # bind, close, wait for the host to take the port, connect
    srv = listener()
    port = srv.getsockname()[1]
    srv.close()
    with open('port.tmp', 'w') as f:
        f.write(str(port))
    os.rename('port.tmp', 'port')
    for _ in range(200):
        if os.path.exists('go'):
            break
        time.sleep(0.05)
    print(name(lambda: socket.create_connection((host, port), timeout=5)))
elif mode == 'talk-any':  # bound to the wildcard, as dev servers are; and never bound
    srv = socket.socket(fam, socket.SOCK_STREAM)
    if sys.argv[4] == 'v6only':
        srv.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    srv.bind(('0.0.0.0' if v == '4' else '::', 0))
    srv.listen(4)
    srv.settimeout(10)
    t = threading.Thread(target=echo_once, args=(srv,), daemon=True)
    t.start()
    c = socket.create_connection((sys.argv[3], srv.getsockname()[1]), timeout=10)
    c.sendall(b'ping')
    print(srv.getsockname()[0], c.recv(16).decode())
    t.join()
    u = socket.socket(fam, socket.SOCK_STREAM)
    u.listen(1)
    print('unbound', u.getsockname()[0])
elif mode == 'refused':  # what stays refused under none
    out = '192.0.2.1' if v == '4' else '2001:db8::1'
    print('bind-out', name(lambda: socket.socket(fam, socket.SOCK_STREAM).bind((out, 0))))
    print('connect-out', name(lambda: socket.socket(fam, socket.SOCK_STREAM).connect((out, 80))))
    print('udp', name(lambda: socket.socket(fam, socket.SOCK_DGRAM)))  # a private loopback's
    ping = socket.IPPROTO_ICMP if v == '4' else socket.IPPROTO_ICMPV6
    print('ping', name(lambda: socket.socket(fam, socket.SOCK_DGRAM, ping)))
    print('udplite', name(lambda: socket.socket(fam, socket.SOCK_DGRAM, 136)))
    print('raw', name(lambda: socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_ICMP)))
    print('sctp', name(lambda: socket.socket(fam, socket.SOCK_STREAM, 132)))
    srv = listener()
    fo = socket.socket(fam, socket.SOCK_STREAM)
    print('fastopen', name(lambda: fo.sendto(b'x', 0x20000000, srv.getsockname()[:2])))
)PY";

// A listener of the host: this process, on loopback, non-blocking so the
// test can ask whether anyone connected. `port` 0: any.
Fd HostListener(bool v6, int port = 0) {
  Fd s(::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  int one = 1;
  ::setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage ss{};
  socklen_t len;
  if (v6) {
    auto& a = reinterpret_cast<sockaddr_in6&>(ss);
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    a.sin6_port = htons(static_cast<uint16_t>(port));
    len = sizeof a;
  } else {
    auto& a = reinterpret_cast<sockaddr_in&>(ss);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    len = sizeof a;
  }
  EXPECT_EQ(::bind(s.get(), reinterpret_cast<sockaddr*>(&ss), len), 0) << std::strerror(errno);
  EXPECT_EQ(::listen(s.get(), 8), 0);
  return s;
}

int PortOf(const Fd& s) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(s.get(), reinterpret_cast<sockaddr*>(&ss), &len);
  return ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(ss).sin6_port
                                        : reinterpret_cast<sockaddr_in&>(ss).sin_port);
}

bool Connected(const Fd& listener) {
  Fd c(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  return c.valid();
}

// What the tool's "refused" mode prints under network none: each call that
// stays refused, with its errno. A UDP socket is made in the run's private
// loopback (tests/integration/udp_test.cc) where one can be made: not under
// Docker's profile, which refuses unshare.
std::string StaysRefused(bool private_loopback) {
  return std::string(
             "bind-out EACCES\n"
             "connect-out EACCES\n") +
         (private_loopback ? "udp ok\n" : "udp EPERM\n") +
         "ping EPERM\n"
         "udplite EPERM\n"
         "raw EPERM\n"
         "sctp EPERM\n"
         "fastopen EPERM\n";
}

class LoopbackTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (!HavePython()) GTEST_SKIP() << "no /usr/bin/python3";
  }
  bool v6() const { return std::string(GetParam()) == "6"; }
  RunResult Tool(const std::string& mode, const std::vector<std::string>& more = {},
                 const std::string& network = "none") {
    std::vector<std::string> args = {"run",       "--workspace", t_.ws(),  "--profile",
                                     "workspace-write", "--network", network, "--",
                                     "/usr/bin/python3", "-c", kTool, mode, GetParam()};
    args.insert(args.end(), more.begin(), more.end());
    return RunCordon(args, "", {}, launcher_);
  }
  ScratchTree t_;
  std::string launcher_;  // empty, or CONTAINER_LAUNCHER
};

// Started as in a Docker container with the default seccomp profile
// (tests/helpers/container_launcher.c): no pidfd_getfd, so each call is made
// on a stand-in socket installed over the tool's (supervisor/socket_stand_in.h),
// under the same rules.
class LoopbackInAContainerTest : public LoopbackTest {
 protected:
  void SetUp() override {
    LoopbackTest::SetUp();
    launcher_ = CONTAINER_LAUNCHER;
  }
};

TEST_P(LoopbackInAContainerTest, AServerAndAClientOfTheRunTalk) {
  RunResult r = Tool("talk");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "PING\n") << r.err;
  r = Tool("talk-child");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "PING\n") << r.err;
}

TEST_P(LoopbackInAContainerTest, TheHostsListenerIsRefusedAndAllowOpensIt) {
  Fd host = HostListener(v6());
  std::string port = std::to_string(PortOf(host));
  for (const char* mode : {"connect", "connect-blocking"}) {
    RunResult r = Tool(mode, {port});
    EXPECT_EQ(r.out, "ECONNREFUSED\n") << mode << r.err;
    EXPECT_FALSE(Connected(host)) << "the host's listener must see no connection";
  }
  RunResult r = Tool("connect", {port}, "allow");
  EXPECT_EQ(r.out, "ok\n") << r.err;
  EXPECT_TRUE(Connected(host));
}

TEST_P(LoopbackInAContainerTest, WhatStaysRefused) {
  RunResult r = Tool("refused");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, StaysRefused(false)) << r.err;
}

TEST_P(LoopbackTest, AServerAndAClientOfTheRunTalk) {
  RunResult r = Tool("talk");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "PING\n") << r.err;
}

// A server bound to the wildcard address (python's http.server, node's
// listen(port), most dev servers) is made on loopback: its clients in the
// run reach it, the kernel names loopback as its address, so nothing
// beyond the host reaches it. A socket listened on unbound likewise.
// An IPv6 one that takes IPv4 too (the default) is made on the IPv4
// loopback, where its clients' 127.0.0.1 reaches it; one set IPV6_V6ONLY
// on ::1.
TEST_P(LoopbackTest, AServerBoundToTheWildcardListensOnLoopback) {
  RunResult r = Tool("talk-any", {"127.0.0.1", "dual"});
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string lo = v6() ? "::ffff:127.0.0.1" : "127.0.0.1";
  EXPECT_EQ(r.out, lo + " PING\nunbound " + lo + "\n") << r.err;
  if (v6() && !InContainerPass()) {
    r = Tool("talk-any", {"::1", "v6only"});
    EXPECT_EQ(r.out, "::1 PING\nunbound ::ffff:127.0.0.1\n") << r.err;
  } else if (v6()) {
    // A stand-in socket does not carry the tool's IPV6_V6ONLY (README,
    // "In a container"): it is dual-stack, and so is where it listens.
    r = Tool("talk-any", {"127.0.0.1", "v6only"});
    EXPECT_EQ(r.out, "::ffff:127.0.0.1 PING\nunbound ::ffff:127.0.0.1\n") << r.err;
  }
  r = Tool("talk-any", {"127.0.0.1", "dual"}, "allow");
  const std::string any = v6() ? "::" : "0.0.0.0";
  EXPECT_EQ(r.out, any + " PING\nunbound " + any + "\n") << "under allow, as asked: " << r.err;
}

TEST_P(LoopbackTest, AListenerInAnotherProcessOfTheRunIsTheRuns) {
  RunResult r = Tool("talk-child");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "PING\n") << r.err;
}

TEST_P(LoopbackTest, TheHostsListenerIsRefused) {
  Fd host = HostListener(v6());
  std::string port = std::to_string(PortOf(host));
  for (const char* mode : {"connect", "connect-blocking"}) {
    RunResult r = Tool(mode, {port});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "ECONNREFUSED\n") << mode << r.err;
    EXPECT_NE(r.err.find("not this run's"), std::string::npos) << r.err;
    EXPECT_FALSE(Connected(host)) << "the host's listener must see no connection";
  }
  // The honest neighbour: the same connect under network allow.
  RunResult r = Tool("connect", {port}, "allow");
  EXPECT_EQ(r.out, "ok\n") << r.err;
  EXPECT_TRUE(Connected(host));
}

TEST_P(LoopbackTest, APortTheToolClosedAndTheHostTookIsRefused) {
  RunResult r;
  std::thread tool([&] { r = Tool("rebind"); });
  std::string port_file = t_.Ws("port");
  for (int i = 0; i < 400 && !Exists(port_file); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  Fd host;
  if (Exists(port_file)) host = HostListener(v6(), std::stoi(ReadFile(port_file)));
  WriteFile(t_.Ws("go"), "");
  tool.join();
  ASSERT_TRUE(host.valid()) << r.err;
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "ECONNREFUSED\n") << r.err;
  EXPECT_FALSE(Connected(host)) << "the host's listener must see no connection";
}

TEST_P(LoopbackTest, WhatStaysRefused) {
  RunResult r = Tool("refused");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, StaysRefused(!InContainerPass())) << r.err;
  EXPECT_NE(r.err.find("only a loopback address"), std::string::npos) << r.err;
}

// Measured before: CPython's test_logging config listener could not make
// its socket under network none (it hung, or failed with EPERM).
TEST(LoopbackTool, CPythonLoggingConfigListener) {
  ScratchTree t;
  if (std::system("python3 -c 'import test.test_logging' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "CPython's test package (test.test_logging) is not installed";
  }
  RunResult r = RunCordon({"run", "--workspace", t.ws(), "--", "python3", "-m", "test",
                           "test_logging", "-m", "*listen_config*"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SUCCESS"), std::string::npos) << r.out << r.err;
}

INSTANTIATE_TEST_SUITE_P(V4AndV6, LoopbackTest, ::testing::Values("4", "6"),
                         [](const auto& info) { return std::string("v") + info.param; });
INSTANTIATE_TEST_SUITE_P(V4AndV6, LoopbackInAContainerTest, ::testing::Values("4", "6"),
                         [](const auto& info) { return std::string("v") + info.param; });

}  // namespace
}  // namespace cordon::testing
