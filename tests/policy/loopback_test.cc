// policy/loopback: the tool's own loopback under network none.
#include "policy/loopback.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>

namespace cordon::policy {
namespace {

InetEndpoint V4(const char* a, uint16_t port) {
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  EXPECT_EQ(inet_pton(AF_INET, a, &sin.sin_addr), 1) << a;
  InetEndpoint e;
  EXPECT_EQ(ParseInetEndpoint(&sin, sizeof sin, &e), InetParse::kInet);
  return e;
}

InetEndpoint V6(const char* a, uint16_t port) {
  sockaddr_in6 sin6{};
  sin6.sin6_family = AF_INET6;
  sin6.sin6_port = htons(port);
  EXPECT_EQ(inet_pton(AF_INET6, a, &sin6.sin6_addr), 1) << a;
  InetEndpoint e;
  EXPECT_EQ(ParseInetEndpoint(&sin6, sizeof sin6, &e), InetParse::kInet);
  return e;
}

TEST(Loopback, WhichAddressesAreLoopback) {
  EXPECT_TRUE(IsLoopback(V4("127.0.0.1", 1)));
  EXPECT_TRUE(IsLoopback(V4("127.255.0.9", 1)));
  EXPECT_TRUE(IsLoopback(V6("::1", 1)));
  EXPECT_TRUE(IsLoopback(V6("::ffff:127.0.0.1", 1)));
  EXPECT_FALSE(IsLoopback(V4("0.0.0.0", 1)));
  EXPECT_FALSE(IsLoopback(V4("128.0.0.1", 1)));
  EXPECT_FALSE(IsLoopback(V4("10.0.0.1", 1)));
  EXPECT_FALSE(IsLoopback(V6("::", 1)));
  EXPECT_FALSE(IsLoopback(V6("::2", 1)));
  EXPECT_FALSE(IsLoopback(V6("::127.0.0.1", 1)));  // v4-compatible, not mapped
  EXPECT_FALSE(IsLoopback(V6("::ffff:10.0.0.1", 1)));
  EXPECT_FALSE(IsLoopback(V6("fe80::1", 1)));
  EXPECT_TRUE(IsWildcard(V4("0.0.0.0", 1)));
  EXPECT_TRUE(IsWildcard(V6("::", 1)));
  EXPECT_TRUE(IsWildcard(V6("::ffff:0.0.0.0", 1)));
  EXPECT_EQ(FormatEndpoint(V4("127.0.0.1", 8080)), "127.0.0.1:8080");
  EXPECT_EQ(FormatEndpoint(V6("::1", 80)), "[::1]:80");
  EXPECT_EQ(FormatEndpoint(V6("::ffff:127.0.0.1", 80)), "[::ffff:127.0.0.1]:80");
  EXPECT_EQ(FormatEndpoint(V6("2001:db8::1", 80)), "[2001:db8:0:0:0:0:0:1]:80");
}

TEST(Loopback, ParsesOnlyWholeInetAddresses) {
  InetEndpoint e;
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  EXPECT_EQ(ParseInetEndpoint(&sin, sizeof sin - 1, &e), InetParse::kShort);
  EXPECT_EQ(ParseInetEndpoint(&sin, 1, &e), InetParse::kShort);
  sin.sin_family = AF_UNSPEC;
  EXPECT_EQ(ParseInetEndpoint(&sin, sizeof sin, &e), InetParse::kUnspec);
  sin.sin_family = AF_UNIX;
  EXPECT_EQ(ParseInetEndpoint(&sin, sizeof sin, &e), InetParse::kOther);
  sockaddr_in6 sin6{};
  sin6.sin6_family = AF_INET6;
  EXPECT_EQ(ParseInetEndpoint(&sin6, 24, &e), InetParse::kInet);  // RFC 2133 size
  EXPECT_EQ(ParseInetEndpoint(&sin6, 23, &e), InetParse::kShort);
}

// Rows as the kernel prints them on a little-endian machine
// (net/ipv4/tcp_ipv4.c get_tcp4_sock, net/ipv6/tcp_ipv6.c get_tcp6_sock).
TEST(Loopback, ReadsTheListenersOfTheKernelTables) {
  if (htonl(1) == 1) GTEST_SKIP() << "the rows below are a little-endian machine's";
  const char* tcp =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
      "timeout inode\n"
      "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000  "
      "      0 4242 1 0000000000000000 100 0 0 10 0\n"
      "   1: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000  "
      "      0 4343 1 0000000000000000 20 4 30 10 -1\n"
      "   2: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0  "
      "      0 99 1 0000000000000000 100 0 0 10 0\n"
      "   3: garbage\n";
  auto v4 = ParseTcpListeners(tcp, false);
  ASSERT_EQ(v4.size(), 2u);
  EXPECT_EQ(FormatEndpoint(v4[0].local), "127.0.0.1:8080");
  EXPECT_EQ(v4[0].inode, 4242u);
  EXPECT_EQ(FormatEndpoint(v4[1].local), "0.0.0.0:22");
  const char* tcp6 =
      "  sl  local_address                         remote_address                        st "
      "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      "   0: 00000000000000000000000001000000:1F91 00000000000000000000000000000000:0000 0A "
      "00000000:00000000 00:00000000 00000000  1000        0 5151 1 0000000000000000 100 0 0 "
      "10 0\n"
      "   1: 0000000000000000FFFF00000100007F:1F92 00000000000000000000000000000000:0000 0A "
      "00000000:00000000 00:00000000 00000000  1000        0 5252 1 0000000000000000 100 0 0 "
      "10 0\n";
  auto v6 = ParseTcpListeners(tcp6, true);
  ASSERT_EQ(v6.size(), 2u);
  EXPECT_EQ(FormatEndpoint(v6[0].local), "[::1]:8081");
  EXPECT_EQ(v6[0].inode, 5151u);
  EXPECT_EQ(FormatEndpoint(v6[1].local), "[::ffff:127.0.0.1]:8082");
}

TEST(Loopback, EveryListenerThatCouldTakeTheConnectionCounts) {
  auto at = [](InetEndpoint e) { return Listener{e, 1}; };
  EXPECT_TRUE(Reaches(at(V4("127.0.0.1", 80)), V4("127.0.0.1", 80)));
  EXPECT_FALSE(Reaches(at(V4("127.0.0.1", 81)), V4("127.0.0.1", 80)));
  EXPECT_FALSE(Reaches(at(V4("127.0.0.2", 80)), V4("127.0.0.1", 80)));
  EXPECT_TRUE(Reaches(at(V4("0.0.0.0", 80)), V4("127.0.0.1", 80)));
  EXPECT_FALSE(Reaches(at(V4("0.0.0.0", 80)), V6("::1", 80)));
  EXPECT_TRUE(Reaches(at(V6("::", 80)), V4("127.0.0.1", 80)));  // dual stack
  EXPECT_TRUE(Reaches(at(V6("::", 80)), V6("::1", 80)));
  EXPECT_TRUE(Reaches(at(V6("::ffff:127.0.0.1", 80)), V4("127.0.0.1", 80)));
  EXPECT_TRUE(Reaches(at(V4("127.0.0.1", 80)), V6("::ffff:127.0.0.1", 80)));
  EXPECT_FALSE(Reaches(at(V4("127.0.0.1", 80)), V6("::1", 80)));
}

NetRequest Connect(InetEndpoint e, size_t listeners, size_t of_run) {
  NetRequest r;
  r.op = NetOp::kConnect;
  r.endpoint = e;
  r.listeners = listeners;
  r.listeners_of_run = of_run;
  return r;
}

TEST(Loopback, NoneConnectsToTheRunsOwnListenersOnly) {
  EXPECT_TRUE(DecideNet(Connect(V4("127.0.0.1", 80), 1, 1)).allow);
  EXPECT_TRUE(DecideNet(Connect(V6("::1", 80), 2, 2)).allow);
  EXPECT_TRUE(DecideNet(Connect(V6("::ffff:127.0.0.1", 80), 1, 1)).allow);
  NetDecision host = DecideNet(Connect(V4("127.0.0.1", 5432), 1, 0));
  EXPECT_FALSE(host.allow);
  EXPECT_EQ(host.err, ECONNREFUSED);
  EXPECT_NE(host.why.find("127.0.0.1:5432"), std::string::npos) << host.why;
  EXPECT_NE(host.why.find("not this run's"), std::string::npos) << host.why;
  EXPECT_FALSE(host.hint.empty());
  // SO_REUSEPORT: one of two listeners is the host's.
  EXPECT_EQ(DecideNet(Connect(V4("127.0.0.1", 80), 2, 1)).err, ECONNREFUSED);
  // Nothing listens: refused without a line.
  NetDecision nobody = DecideNet(Connect(V4("127.0.0.1", 80), 0, 0));
  EXPECT_EQ(nobody.err, ECONNREFUSED);
  EXPECT_TRUE(nobody.why.empty());
  NetDecision out = DecideNet(Connect(V4("93.184.216.34", 80), 1, 1));
  EXPECT_EQ(out.err, EACCES);
  EXPECT_NE(out.why.find("network none"), std::string::npos);
  EXPECT_EQ(DecideNet(Connect(V6("::ffff:10.0.0.1", 80), 1, 1)).err, EACCES);
  NetRequest unspec = Connect({}, 0, 0);
  unspec.parsed = InetParse::kUnspec;
  EXPECT_TRUE(DecideNet(unspec).allow);
  NetRequest other = Connect({}, 0, 0);
  other.parsed = InetParse::kOther;
  EXPECT_EQ(DecideNet(other).err, EACCES);
}

TEST(Loopback, NoneBindsAndListensOnLoopbackOnly) {
  NetRequest r;
  r.op = NetOp::kBind;
  for (InetEndpoint e : {V4("127.0.0.1", 0), V4("127.0.0.2", 8080), V6("::1", 0),
                         V6("::ffff:127.0.0.1", 0)}) {
    r.endpoint = e;
    EXPECT_TRUE(DecideNet(r).allow) << FormatEndpoint(e);
  }
  for (InetEndpoint e : {V4("10.1.2.3", 0), V6("fe80::1", 0), V6("::ffff:10.1.2.3", 0)}) {
    r.endpoint = e;
    NetDecision d = DecideNet(r);
    EXPECT_FALSE(d.allow) << FormatEndpoint(e);
    EXPECT_EQ(d.err, EACCES);
    EXPECT_NE(d.why.find("loopback"), std::string::npos) << d.why;
  }
  // The wildcard, as dev servers bind it: made on loopback.
  for (InetEndpoint e : {V4("0.0.0.0", 0), V6("::", 8080), V6("::ffff:0.0.0.0", 0)}) {
    r.endpoint = e;
    NetDecision d = DecideNet(r);
    EXPECT_TRUE(d.allow && d.on_loopback) << FormatEndpoint(e);
  }
  r.endpoint = V4("127.0.0.1", 0);
  EXPECT_FALSE(DecideNet(r).on_loopback);
  r.op = NetOp::kListen;
  r.endpoint = V4("0.0.0.0", 0);  // an unbound socket's name: bound on loopback first
  EXPECT_TRUE(DecideNet(r).allow && DecideNet(r).on_loopback);
  r.endpoint = V4("0.0.0.0", 80);  // bound to the wildcard: not by this run
  EXPECT_EQ(DecideNet(r).err, EACCES);
  r.endpoint = V6("::1", 4000);
  EXPECT_TRUE(DecideNet(r).allow);
  EXPECT_FALSE(DecideNet(r).on_loopback);
}

// The address a wildcard bind is made on: the loopback of its family.
TEST(Loopback, AWildcardAddressBecomesLoopback) {
  auto v4 = [](const char* a) {
    sockaddr_in s{};
    s.sin_family = AF_INET;
    s.sin_port = htons(8000);
    inet_pton(AF_INET, a, &s.sin_addr);
    return s;
  };
  auto v6 = [](const char* a) {
    sockaddr_in6 s{};
    s.sin6_family = AF_INET6;
    s.sin6_port = htons(8000);
    inet_pton(AF_INET6, a, &s.sin6_addr);
    return s;
  };
  auto text = [](const void* sa, size_t len) {
    InetEndpoint e;
    EXPECT_EQ(ParseInetEndpoint(sa, len, &e), InetParse::kInet);
    return FormatEndpoint(e);
  };
  sockaddr_in a = v4("0.0.0.0");
  EXPECT_TRUE(LoopbackForWildcard(&a, sizeof a, false));
  EXPECT_EQ(text(&a, sizeof a), "127.0.0.1:8000");
  sockaddr_in6 b = v6("::");
  EXPECT_TRUE(LoopbackForWildcard(&b, sizeof b, false));
  EXPECT_EQ(text(&b, sizeof b), "[::1]:8000");
  // A dual-stack socket: where a client's 127.0.0.1 reaches it.
  b = v6("::");
  EXPECT_TRUE(LoopbackForWildcard(&b, sizeof b, true));
  EXPECT_EQ(text(&b, sizeof b), "[::ffff:127.0.0.1]:8000");
  sockaddr_in6 c = v6("::ffff:0.0.0.0");
  EXPECT_TRUE(LoopbackForWildcard(&c, sizeof c, false));
  EXPECT_EQ(text(&c, sizeof c), "[::ffff:127.0.0.1]:8000");
  sockaddr_in d = v4("10.0.0.1");
  EXPECT_FALSE(LoopbackForWildcard(&d, sizeof d, true));
  EXPECT_EQ(text(&d, sizeof d), "10.0.0.1:8000");
  EXPECT_FALSE(LoopbackForWildcard(&a, 4, false)) << "a short address is left alone";
}

TEST(Loopback, AllowAllowsEverything) {
  NetRequest r = Connect(V4("93.184.216.34", 80), 0, 0);
  r.mode = Network::kAllow;
  EXPECT_TRUE(DecideNet(r).allow);
  r.op = NetOp::kBind;
  r.endpoint = V4("0.0.0.0", 0);
  EXPECT_TRUE(DecideNet(r).allow);
}

// public-web and hosts: the proxy's endpoint, and nothing else new.
TEST(Loopback, TheWebGrantsReachTheProxyOnly) {
  const InetEndpoint proxy = V4("127.0.0.1", 3128);
  for (Network mode : {Network::kPublicWeb, Network::kHosts}) {
    NetRequest r = Connect(proxy, 0, 0);
    r.mode = mode;
    r.proxy = &proxy;
    NetDecision d = DecideNet(r);
    EXPECT_TRUE(d.allow);
    EXPECT_TRUE(d.to_proxy);
    r.endpoint = V6("::ffff:127.0.0.1", 3128);
    EXPECT_TRUE(DecideNet(r).to_proxy) << "the mapped form of the same endpoint";
    r.endpoint = V4("127.0.0.1", 3129);  // another loopback port: as under none
    EXPECT_EQ(DecideNet(r).err, ECONNREFUSED);
    r.endpoint = V4("93.184.216.34", 443);
    d = DecideNet(r);
    EXPECT_EQ(d.err, EACCES);
    EXPECT_NE(d.hint.find("proxy"), std::string::npos) << d.hint;
  }
  NetRequest none = Connect(proxy, 0, 0);
  none.proxy = &proxy;
  EXPECT_FALSE(DecideNet(none).allow) << "no proxy under none";
}

// UDP under a fenced mode: a socket of the run's private loopback may bind
// anywhere and connect to its loopback (nothing there reaches beyond it); a
// connect beyond it is refused with the errno the namespace would give,
// and says why (a name server's address: names do not resolve). Any other
// UDP socket, nowhere, not even to a loopback port with no TCP listener.
TEST(Loopback, DatagramSocketsOfThePrivateLoopbackOnly) {
  for (Network mode : {Network::kNone, Network::kPublicWeb, Network::kHosts}) {
    for (NetOp op : {NetOp::kBind, NetOp::kConnect, NetOp::kListen}) {
      for (const InetEndpoint& e :
           {V4("127.0.0.1", 53), V4("0.0.0.0", 0), V6("::1", 9), V4("93.184.216.34", 53)}) {
        NetRequest r = Connect(e, 0, 0);
        r.mode = mode;
        r.op = op;
        r.datagram = true;
        r.private_loopback = true;
        if (op == NetOp::kConnect && e.port == 53 && !IsLoopback(e)) {
          NetDecision beyond = DecideNet(r);
          EXPECT_FALSE(beyond.allow);
          EXPECT_EQ(beyond.err, ENETUNREACH);
          EXPECT_NE(beyond.why.find("names do not resolve"), std::string::npos) << beyond.why;
          EXPECT_FALSE(beyond.hint.empty());
        } else {
          EXPECT_TRUE(DecideNet(r).allow) << FormatEndpoint(e);
        }
        r.private_loopback = false;
        NetDecision d = DecideNet(r);
        EXPECT_FALSE(d.allow) << FormatEndpoint(e);
        EXPECT_EQ(d.err, EACCES);
        EXPECT_NE(d.why.find("private loopback"), std::string::npos) << d.why;
      }
    }
  }
  // The neighbour: a stream socket's connect is decided by its listeners.
  NetRequest tcp = Connect(V4("127.0.0.1", 53), 1, 0);
  tcp.private_loopback = true;
  EXPECT_EQ(DecideNet(tcp).err, ECONNREFUSED);
}

DatagramSocketRequest Udp(uint64_t domain, uint64_t type, uint64_t protocol,
                          Network mode = Network::kNone) {
  DatagramSocketRequest r;
  r.mode = mode;
  r.domain = domain;
  r.type = type;
  r.protocol = protocol;
  r.have_private_loopback = true;
  return r;
}

TEST(Loopback, UdpSocketsAreMadeInThePrivateLoopback) {
  for (Network mode : {Network::kNone, Network::kPublicWeb, Network::kHosts}) {
    for (uint64_t domain : {AF_INET, AF_INET6}) {
      for (uint64_t protocol : {uint64_t{0}, uint64_t{IPPROTO_UDP}}) {
        DatagramSocketDecision d = DecideDatagramSocket(
            Udp(domain, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol, mode));
        EXPECT_TRUE(d.allow) << d.why;
        EXPECT_EQ(d.domain, static_cast<int>(domain));
        EXPECT_EQ(d.type, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC);
        EXPECT_EQ(d.protocol, static_cast<int>(protocol));
      }
    }
  }
  // The kernel reads each register as an int.
  EXPECT_TRUE(DecideDatagramSocket(Udp(uint64_t{1} << 32 | AF_INET, SOCK_DGRAM, 0)).allow);
}

TEST(Loopback, OtherDatagramSocketsAreRefused) {
  for (int protocol :
       {int{IPPROTO_ICMP}, int{IPPROTO_ICMPV6}, int{IPPROTO_UDPLITE}, int{IPPROTO_TCP}, 255}) {
    DatagramSocketDecision d =
        DecideDatagramSocket(Udp(AF_INET, SOCK_DGRAM, static_cast<uint64_t>(protocol)));
    EXPECT_FALSE(d.allow) << protocol;
    EXPECT_EQ(d.err, EPERM) << protocol;
  }
  EXPECT_EQ(DecideDatagramSocket(Udp(AF_INET, SOCK_RAW, 0)).err, EPERM);
  EXPECT_EQ(DecideDatagramSocket(Udp(AF_INET, SOCK_STREAM, 0)).err, EPERM);
  EXPECT_EQ(DecideDatagramSocket(Udp(AF_UNIX, SOCK_DGRAM, 0)).err, EPERM);
  EXPECT_EQ(DecideDatagramSocket(Udp(AF_INET, SOCK_DGRAM | 0x100, 0)).err, EINVAL);
  // Under allow the tool makes its own: nothing is made here.
  EXPECT_FALSE(DecideDatagramSocket(Udp(AF_INET, SOCK_DGRAM, 0, Network::kAllow)).allow);
  // No namespace: refused, saying why and what would open it.
  DatagramSocketRequest r = Udp(AF_INET6, SOCK_DGRAM, 0);
  r.have_private_loopback = false;
  r.no_private_loopback = "unshare: Operation not permitted";
  DatagramSocketDecision d = DecideDatagramSocket(r);
  EXPECT_FALSE(d.allow);
  EXPECT_EQ(d.err, EPERM);
  EXPECT_NE(d.why.find("unshare: Operation not permitted"), std::string::npos) << d.why;
  EXPECT_NE(d.hint.find("--network allow"), std::string::npos) << d.hint;
}

}  // namespace
}  // namespace cordon::policy
