// The tool's own UDP under network none (issue 25 item 5; policy/loopback.h,
// supervisor/net/loopback_netns.h): a UDP server and client of one run talk
// over 127.0.0.1 and ::1, with sendto/recvfrom, connect/send and sendmsg,
// because the tool's UDP sockets are made in a private namespace whose only
// interface is loopback; a UDP listener of the host (this test process,
// outside the run) on the port the tool sends to receives nothing. Ground
// truth is the host listener's side: how many datagrams arrived. Where no
// namespace can be made (Docker's profile refuses unshare: the moby pass,
// the container launcher) UDP stays refused, saying why.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "base/fd.h"
#include "tests/support/child_process.h"
#include "tests/support/probe_test.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

// A UDP socket of the host on loopback, non-blocking: the test counts what
// arrived.
Fd HostUdp(bool v6) {
  Fd s(::socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  sockaddr_storage ss{};
  socklen_t len;
  if (v6) {
    auto& a = reinterpret_cast<sockaddr_in6&>(ss);
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    len = sizeof a;
  } else {
    auto& a = reinterpret_cast<sockaddr_in&>(ss);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof a;
  }
  EXPECT_EQ(::bind(s.get(), reinterpret_cast<sockaddr*>(&ss), len), 0) << std::strerror(errno);
  return s;
}

std::string PortOf(const Fd& s) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(s.get(), reinterpret_cast<sockaddr*>(&ss), &len);
  return std::to_string(ntohs(ss.ss_family == AF_INET6
                                  ? reinterpret_cast<sockaddr_in6&>(ss).sin6_port
                                  : reinterpret_cast<sockaddr_in&>(ss).sin_port));
}

// The datagrams that reached `s`, after a moment for any still in flight.
int Received(const Fd& s) {
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  int n = 0;
  char buf[64];
  while (::recv(s.get(), buf, sizeof buf, 0) >= 0) ++n;
  return n;
}

// A run gets a private loopback here, except under Docker's profile (the
// moby pass), which refuses unshare.
bool PrivateLoopback() { return !InContainerPass(); }

class UdpTest : public ProbeTest {};

TEST_P(UdpTest, AServerAndAClientOfTheRunTalk) {
  for (const char* v : {"4", "6"}) {
    int status = Probe("read-only", {"udp", "talk", v}, {"--network", "none"});
    EXPECT_EQ(status, PrivateLoopback() ? 0 : EPERM) << "v" << v << "\n" << last_.err;
  }
}

TEST_P(UdpTest, TheHostsListenerGetsNothing) {
  for (bool v6 : {false, true}) {
    Fd host = HostUdp(v6);
    const std::string v = v6 ? "6" : "4";
    int status = Probe("read-only", {"udp", "send", v, PortOf(host)}, {"--network", "none"});
    // The sends succeed: they go to the private loopback, where nothing
    // listens on that port.
    EXPECT_EQ(status, PrivateLoopback() ? 0 : EPERM) << "v" << v << "\n" << last_.err;
    EXPECT_EQ(Received(host), 0) << "v" << v << ": the host's UDP listener must receive nothing";
    // The honest neighbour: under network allow the same sends arrive.
    status = Probe("read-only", {"udp", "send", v, PortOf(host)}, {"--network", "allow"});
    EXPECT_EQ(status, 0) << last_.err;
    EXPECT_EQ(Received(host), 3) << "v" << v;
  }
}

// ICMP ping sockets, raw sockets and UDP-Lite stay refused under none; the
// same ping socket is the kernel's to decide under allow.
TEST_P(UdpTest, OtherDatagramAndRawSocketsStayRefused) {
  const std::string inet = std::to_string(AF_INET), inet6 = std::to_string(AF_INET6);
  const std::string dgram = std::to_string(SOCK_DGRAM), raw = std::to_string(SOCK_RAW);
  const std::vector<std::vector<std::string>> refused = {
      {inet, dgram, std::to_string(IPPROTO_ICMP)},
      {inet6, dgram, std::to_string(IPPROTO_ICMPV6)},
      {inet, dgram, std::to_string(IPPROTO_UDPLITE)},
      {inet, raw, std::to_string(IPPROTO_ICMP)},
      {inet6, raw, std::to_string(IPPROTO_UDP)},
      {inet, dgram, std::to_string(IPPROTO_TCP)},
  };
  for (const auto& s : refused) {
    std::vector<std::string> op = {"udp", "socket"};
    op.insert(op.end(), s.begin(), s.end());
    EXPECT_EQ(Probe("read-only", op, {"--network", "none"}), EPERM)
        << s[0] << " " << s[1] << " " << s[2] << "\n"
        << last_.err;
  }
  // UDP by its protocol number is made.
  EXPECT_EQ(Probe("read-only", {"udp", "socket", inet6, dgram, std::to_string(IPPROTO_UDP)},
                  {"--network", "none"}),
            PrivateLoopback() ? 0 : EPERM)
      << last_.err;
}

INSTANTIATE_TEST_SUITE_P(Probes, UdpTest, ProbeParams(), ProbeParamName);

// The tool: python3 with a mode, on v4 or v6. Every wait is bounded.
constexpr const char* kTool = R"PY(
import errno, fcntl, os, socket, sys
mode, v = sys.argv[1], sys.argv[2]
fam, host = (socket.AF_INET, '127.0.0.1') if v == '4' else (socket.AF_INET6, '::1')
def udp(kind=socket.SOCK_DGRAM):
    s = socket.socket(fam, kind)
    s.settimeout(5)
    return s
if mode == 'talk':
    srv, cli = udp(), udp()
    srv.bind((host, 0))
    addr = srv.getsockname()[:2]
    cli.sendto(b'ping', addr)
    data, peer = srv.recvfrom(16)
    srv.sendto(data.upper(), peer)
    out = [cli.recv(16).decode()]
    cli.sendmsg([b'msg'], [], 0, addr)
    out.append(srv.recv(16).decode())
    cli.connect(addr)
    cli.send(b'conn')
    out.append(srv.recv(16).decode())
    print(' '.join(out))
elif mode == 'flags':  # SOCK_NONBLOCK and SOCK_CLOEXEC as asked
    import ctypes
    a = socket.socket(fam, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC)
    b = ctypes.CDLL(None, use_errno=True).socket(fam, socket.SOCK_DGRAM, 0)  # neither
    fl = lambda s: (bool(fcntl.fcntl(s, fcntl.F_GETFL) & os.O_NONBLOCK),
                    bool(fcntl.fcntl(s, fcntl.F_GETFD) & fcntl.FD_CLOEXEC))
    print(fl(a), fl(b) if b >= 0 else ctypes.get_errno())
elif mode == 'resolve':  # a name server beyond the run: the connect says why
    s = udp()
    try:
        s.connect(('192.0.2.1', 53) if v == '4' else ('2001:db8::1', 53))
        print('connected')
    except OSError as e:
        print(errno.errorcode[e.errno])
elif mode == 'send':
    s = udp()
    port = int(sys.argv[3])
    s.sendto(b'x', (host, port))
    s.sendmsg([b'y'], [], 0, (host, port))
    s.connect((host, port))
    s.send(b'z')
    print('sent')
)PY";

class UdpPythonTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (!HavePython()) GTEST_SKIP() << "no /usr/bin/python3";
  }
  bool v6() const { return std::string(GetParam()) == "6"; }
  // cordon's arguments to run the tool in `mode` under `network`.
  std::vector<std::string> Args(const std::string& mode, const std::vector<std::string>& more = {},
                                const std::string& network = "none") const {
    std::vector<std::string> args = {"--log-level", "info",  "run",     "--workspace",      t_.ws(),
                                     "--network",   network, "--",      "/usr/bin/python3", "-c",
                                     kTool,         mode,    GetParam()};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }
  RunResult Tool(const std::string& mode, const std::vector<std::string>& more = {},
                 const std::string& network = "none") {
    return RunCordon(Args(mode, more, network), "", env_, launcher_);
  }
  ScratchTree t_;
  std::string launcher_;          // empty, or CONTAINER_LAUNCHER
  std::vector<std::string> env_;  // for the launcher
  bool private_loopback_ = PrivateLoopback();
};

TEST_P(UdpPythonTest, AServerAndAClientOfTheRunTalk) {
  RunResult r = Tool("talk");
  if (!private_loopback_) {
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.err.find("PermissionError"), std::string::npos) << r.err;
    return;
  }
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "PING msg conn\n") << r.err;
  // Under public-web the tool's UDP is the same private loopback.
  r = Tool("talk", {}, "public-web");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "PING msg conn\n") << r.err;
}

TEST_P(UdpPythonTest, SocketFlagsAreTheToolsOwn) {
  RunResult r = Tool("flags");
  if (!private_loopback_) {  // the container pass: refused, as the README says
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.err.find("PermissionError"), std::string::npos) << r.err;
    return;
  }
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "(True, True) (False, False)\n") << r.err;
}

TEST_P(UdpPythonTest, TheHostsListenerGetsNothingAndAllowReachesIt) {
  Fd host = HostUdp(v6());
  RunResult r = Tool("send", {PortOf(host)});
  if (private_loopback_) {
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "sent\n") << r.err;
  }
  EXPECT_EQ(Received(host), 0) << "the host's UDP listener must receive nothing";
  r = Tool("send", {PortOf(host)}, "allow");
  EXPECT_EQ(r.out, "sent\n") << r.err;
  EXPECT_EQ(Received(host), 3);
}

// A resolver asking a name server beyond the run: the connect fails as the
// namespace would fail it (ENETUNREACH), and cordon says why, where the
// tool only says that names do not resolve: at once at info level; at the
// default level at the run's end, and only when the tool failed (an honest
// tool asks for names /etc/hosts answers too: RefusalHintTest).
TEST_P(UdpPythonTest, AConnectToANameServerBeyondTheRunSaysWhy) {
  if (private_loopback_) {
    std::vector<std::string> args = Args("resolve");
    args.erase(args.begin(), args.begin() + 2);  // the default level
    RunResult quiet = RunCordon(args, "", env_, launcher_);
    EXPECT_EQ(quiet.status, 0) << quiet.err;
    EXPECT_EQ(quiet.err.find("refused"), std::string::npos) << quiet.err;
    // A resolver's own steps, whatever the machine's resolv.conf names.
    args.back() =
        "import socket, sys\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "try:\n    s.connect(('192.0.2.1', 53))\nexcept OSError:\n    sys.exit(1)\n";
    args.erase(args.end() - 3, args.end() - 1);  // python3 -c CODE, no mode
    RunResult failed = RunCordon(args, "", env_, launcher_);
    EXPECT_NE(failed.status, 0);
    EXPECT_NE(failed.err.find("names do not resolve"), std::string::npos) << failed.err;
  }
  RunResult r = Tool("resolve");
  if (!private_loopback_) {  // the container pass: UDP refused whole, as the README says
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.err.find("PermissionError"), std::string::npos) << r.err;
    return;
  }
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "ENETUNREACH\n") << r.err;
  EXPECT_NE(r.err.find("names do not resolve"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--network allow"), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(V4AndV6, UdpPythonTest, ::testing::Values("4", "6"),
                         [](const auto& info) { return std::string("v") + info.param; });

// Measured before: CPython's UDP logging handlers' tests (DatagramHandler,
// SysLogHandler over UDP on 127.0.0.1 and ::1) were skipped under network
// none, their server's socket refused.
TEST(UdpTool, CPythonLoggingUdpHandlers) {
  ScratchTree t;
  if (std::system("python3 -c 'import test.test_logging' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "CPython's test package (test.test_logging) is not installed";
  }
  const bool private_loopback = PrivateLoopback();
  RunResult r = RunCordon({"run", "--workspace", t.ws(), "--", "python3", "-m", "test",
                           "test_logging", "-v", "-m", "test.test_logging.DatagramHandlerTest.*",
                           "-m", "test.test_logging.SysLogHandlerTest.*", "-m",
                           "test.test_logging.IPv6SysLogHandlerTest.*"});
  if (!private_loopback) {
    // The container pass: the handlers' servers are refused their UDP
    // sockets, and CPython skips those tests (as it did everywhere before).
    EXPECT_NE(r.out.find("skipped"), std::string::npos) << r.out;
    return;
  }
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SUCCESS"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(r.out.find("skipped"), std::string::npos) << r.out;
}

// Docker's default profile: unshare refused, so no namespace can be made;
// the tool's UDP is refused (EPERM, as the filter refused it before: no
// refusal line at the default level, where every name lookup would print
// one), the reason said once at info level, and `cordon doctor` says so.
class UdpInAContainerTest : public UdpPythonTest {
 protected:
  void SetUp() override {
    UdpPythonTest::SetUp();
    launcher_ = CONTAINER_LAUNCHER;
    private_loopback_ = false;
  }
};

TEST_P(UdpInAContainerTest, UdpIsRefusedSayingWhy) {
  RunResult r = Tool("talk");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("PermissionError"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("private network namespace"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unshare"), std::string::npos) << r.err;
  RunResult d = RunCordon({"doctor", "--json"}, "", {}, CONTAINER_LAUNCHER);
  auto j = nlohmann::json::parse(d.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << d.out << d.err;
  EXPECT_EQ(j["udp_private_loopback"], false) << d.out;
}

INSTANTIATE_TEST_SUITE_P(V4AndV6, UdpInAContainerTest, ::testing::Values("4", "6"),
                         [](const auto& info) { return std::string("v") + info.param; });

// A container whose profile lets user namespaces be made, without
// CAP_SYS_ADMIN or pidfd_getfd: the namespace is a user namespace's, and
// each connect is made on a stand-in socket (supervisor/socket_stand_in.h),
// which must be made in the private loopback too, never the host's.
class UdpInAUserNamespaceTest : public UdpPythonTest {
 protected:
  void SetUp() override {
    UdpPythonTest::SetUp();
    launcher_ = CONTAINER_LAUNCHER;
    env_ = {"CORDON_TEST_CONTAINER_UNSHARE=1"};
    private_loopback_ = true;
  }
};

TEST_P(UdpInAUserNamespaceTest, AServerAndAClientOfTheRunTalk) {
  RunResult r = Tool("talk");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "PING msg conn\n") << r.err;
  RunResult d = RunCordon({"doctor", "--json"}, "", env_, CONTAINER_LAUNCHER);
  auto j = nlohmann::json::parse(d.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << d.out << d.err;
  EXPECT_EQ(j["udp_private_loopback"], true) << d.out;
  EXPECT_EQ(j["udp_private_loopback_detail"], "user and network namespace") << d.out;
}

TEST_P(UdpInAUserNamespaceTest, TheHostsListenerGetsNothing) {
  Fd host = HostUdp(v6());
  RunResult r = Tool("send", {PortOf(host)});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "sent\n") << r.err;
  EXPECT_EQ(Received(host), 0) << "the host's UDP listener must receive nothing";
}

INSTANTIATE_TEST_SUITE_P(V4AndV6, UdpInAUserNamespaceTest, ::testing::Values("4", "6"),
                         [](const auto& info) { return std::string("v") + info.param; });

// The non-root path as a real user: cordon itself run by nobody (no
// capability at all), so the private loopback is a user namespace that
// nobody makes. Its own workspace and state home; the host's listener is
// the test's (root's).
class UdpAsNobodyTest : public UdpPythonTest {
 protected:
  void SetUp() override {
    UdpPythonTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_EQ(::chmod(t_.root().c_str(), 0755), 0);
    home_ = t_.root() + "/home";
    ASSERT_EQ(::mkdir(home_.c_str(), 0700), 0);
    for (const std::string& d : {t_.ws(), home_}) ASSERT_EQ(::chown(d.c_str(), 65534, 65534), 0);
  }
  // `cordon ARGS` as nobody; what it printed, in files nobody may write.
  RunResult AsNobodyRun(const std::vector<std::string>& args) {
    const std::string out = home_ + "/out", err = home_ + "/err";
    RunResult r;
    r.status = AsNobody([&] {
      RunResult n = RunCordon(args, t_.ws(), {"HOME=" + home_});
      WriteFile(out, n.out);
      WriteFile(err, n.err);
      return n.status;
    });
    r.out = ReadFile(out);
    r.err = ReadFile(err);
    return r;
  }
  std::string home_;
};

TEST_P(UdpAsNobodyTest, AServerAndAClientOfTheRunTalk) {
  RunResult d = AsNobodyRun({"doctor", "--json"});
  auto j = nlohmann::json::parse(d.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << d.out << d.err;
  // The kernel's word, asked directly (outside the container pass, whose
  // profile refuses unshare to cordon only).
  const bool can =
      !InContainerPass() &&
      AsNobody([] { return ::unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0 ? 0 : 1; }) == 0;
  EXPECT_EQ(j["udp_private_loopback"], can) << d.out;
  if (!can) {
    // A kernel that lets no unprivileged user make a user namespace: the
    // tool's UDP is refused, saying why.
    RunResult r = AsNobodyRun(Args("talk"));
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.err.find("private network namespace"), std::string::npos) << r.err;
    return;
  }
  EXPECT_EQ(j["udp_private_loopback_detail"], "user and network namespace") << d.out;
  RunResult r = AsNobodyRun(Args("talk"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "PING msg conn\n") << r.err;
}

TEST_P(UdpAsNobodyTest, TheHostsListenerGetsNothing) {
  Fd host = HostUdp(v6());
  RunResult r = AsNobodyRun(Args("send", {PortOf(host)}));
  EXPECT_EQ(Received(host), 0) << "the host's UDP listener must receive nothing\n" << r.err;
  // The honest neighbour: nobody's run under network allow reaches it.
  r = AsNobodyRun(Args("send", {PortOf(host)}, "allow"));
  EXPECT_EQ(r.out, "sent\n") << r.err;
  EXPECT_EQ(Received(host), 3);
}

INSTANTIATE_TEST_SUITE_P(V4AndV6, UdpAsNobodyTest, ::testing::Values("4", "6"),
                         [](const auto& info) { return std::string("v") + info.param; });

}  // namespace
}  // namespace cordon::testing
