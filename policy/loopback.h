// The tool's own loopback (issue 25 item 5). Test suites, language servers,
// dev servers and notebook kernels talk to themselves over 127.0.0.1 and
// ::1. Under network none, without a network namespace, the tool may bind
// and listen on a loopback address, and connect to a loopback port only
// while every listening socket that could take the connection belongs to a
// process of this run; any other listener on loopback (the host's
// databases, agents, Docker's socket proxies) and every other address stay
// refused. The supervisor gathers the facts (supervisor/loopback_facts.cc:
// the listeners from /proc/net/tcp{,6}, the run's socket inodes) and
// performs what is allowed; these are the decisions, and the parsing of
// addresses and of the kernel's listener tables. Pure.
//
// UDP takes another road: a datagram goes wherever each sendto or sendmsg
// says, and sendmsg keeps its address where neither seccomp nor the
// supervisor can check it race-free. So under a fenced mode the tool's UDP
// sockets are made by the supervisor inside a private network namespace
// whose only interface is loopback (supervisor/net/loopback_netns.h): a
// socket's namespace is fixed when it is made, so whatever it sends can
// reach the run's own UDP sockets only, never the host's (a DNS stub on
// 127.0.0.53, a test listener). DecideDatagramSocket says which sockets
// are made there; DecideNet lets their bind and connect be (the namespace
// is the fence).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.h"

namespace cordon::policy {

// An AF_INET or AF_INET6 address and port. A v4-mapped v6 address
// (::ffff:a.b.c.d) is kept as v6; Loopback() and Reaches() see through it.
struct InetEndpoint {
  bool v6 = false;
  std::array<uint8_t, 16> addr{};  // v4: the first 4 bytes, network order
  uint16_t port = 0;               // host order
};

enum class InetParse { kInet, kUnspec, kOther, kShort };

// Reads a sockaddr as the tool passed it (`len` bytes): kInet with *out set
// for a full sockaddr_in / sockaddr_in6, kUnspec for AF_UNSPEC (connect's
// disconnect), kOther for another family, kShort for a truncated one.
InetParse ParseInetEndpoint(const void* sockaddr, size_t len, InetEndpoint* out);

// 127.0.0.0/8, ::1, and ::ffff:127.0.0.0/104.
bool IsLoopback(const InetEndpoint& e);
// 0.0.0.0, ::, ::ffff:0.0.0.0.
bool IsWildcard(const InetEndpoint& e);
// "127.0.0.1:8080", "[::1]:8080".
std::string FormatEndpoint(const InetEndpoint& e);

// One socket in LISTEN state, from /proc/net/tcp or /proc/net/tcp6.
struct Listener {
  InetEndpoint local;
  uint64_t inode = 0;
};

// The LISTEN (state 0A) rows of the text of /proc/net/tcp (`v6` false) or
// /proc/net/tcp6 (true). Rows it cannot read are skipped.
std::vector<Listener> ParseTcpListeners(std::string_view table, bool v6);

// Whether a connection to `target` could be taken by `l`: the same port,
// and the same address or a wildcard one (a dual-stack :: listener takes
// v4 connections too). Every such listener counts, not the one the kernel
// would pick: with SO_REUSEPORT several share a port.
bool Reaches(const Listener& l, const InetEndpoint& target);

enum class NetOp { kBind, kConnect, kListen };

// What the supervisor knows about one bind, connect or listen on an
// AF_INET/AF_INET6 socket.
struct NetRequest {
  Network mode = Network::kNone;
  NetOp op = NetOp::kConnect;
  InetParse parsed = InetParse::kInet;  // of the address (bind, connect)
  InetEndpoint endpoint;  // the address (bind, connect) or the socket's own name (listen)
  // connect: listeners that could take it, and how many of them belong to
  // a process of this run.
  size_t listeners = 0;
  size_t listeners_of_run = 0;
  // public-web and hosts: the web proxy's endpoint (null: none).
  const InetEndpoint* proxy = nullptr;
  // A datagram (SOCK_DGRAM) socket, and whether it lives in the run's
  // private loopback namespace (its namespace cookie is that one's).
  bool datagram = false;
  bool private_loopback = false;
};

struct NetDecision {
  bool allow = false;
  int err = 0;          // errno when refused
  std::string why;      // empty: refused without a line (nothing is listening)
  std::string hint;     // the grant that would allow it
  bool to_proxy = false;  // a connect to the web proxy (the supervisor records its port)
  // A bind to the wildcard address, made on the loopback address of its
  // family instead (LoopbackForWildcard): the tool's server listens where
  // its own clients reach it, and nowhere else.
  bool on_loopback = false;
};

// Under allow everything is allowed (made without privileges). Under
// public-web and hosts: as none, and a connect to the web proxy's endpoint.
// Under none:
// bind to a loopback address only, a wildcard one made on loopback (dev
// servers and test suites bind 0.0.0.0 or :: by default: on_loopback);
// listen on a socket bound to one (an unbound one is bound on loopback
// first, where the kernel would bind the wildcard address); connect to a
// loopback port only while every listener there is the run's (ECONNREFUSED
// otherwise: as a private loopback would answer); AF_UNSPEC connect (a
// disconnect) allowed; any other address EACCES. A datagram socket:
// anything on one of the run's private loopback namespace (nothing there
// reaches beyond it), nothing on any other (EACCES: under a fenced mode
// the tool has no other UDP socket of its own making).
NetDecision DecideNet(const NetRequest& r);

// Rewrites the wildcard address of an AF_INET or AF_INET6 sockaddr (`len`
// bytes, as the tool passed it) to the loopback address of its family:
// 0.0.0.0 to 127.0.0.1, ::ffff:0.0.0.0 to ::ffff:127.0.0.1, and :: to ::1,
// or, for a `dual_stack` socket (IPV6_V6ONLY off, the default), to
// ::ffff:127.0.0.1: one socket cannot listen on both loopbacks, and a
// client of a dual-stack server (node's listen(port), Go's ":8080") dials
// 127.0.0.1 far more often than ::1 ("localhost" tries both). False, and
// nothing changed, for any other address.
bool LoopbackForWildcard(void* sockaddr, size_t len, bool dual_stack);

// socket(2) for an AF_INET or AF_INET6 SOCK_DGRAM socket under `mode`, as
// the tool's registers hold it (the kernel reads each as an int).
struct DatagramSocketRequest {
  Network mode = Network::kNone;
  uint64_t domain = 0, type = 0, protocol = 0;
  // Whether the run has a private loopback namespace (made at the first
  // such request), and if not, why not ("unshare: Operation not permitted").
  bool have_private_loopback = false;
  std::string no_private_loopback;
};

struct DatagramSocketDecision {
  bool allow = false;  // make it in the run's private loopback namespace
  int err = 0;
  std::string why, hint;
  // The socket(2) arguments to make it with (SOCK_CLOEXEC and
  // SOCK_NONBLOCK as asked, kept in type).
  int domain = 0, type = 0, protocol = 0;
};

// Under a fenced mode, UDP (protocol 0 or IPPROTO_UDP) of either inet
// family is made in the private loopback namespace; flags beyond
// SOCK_NONBLOCK and SOCK_CLOEXEC are EINVAL as the kernel says; other
// protocols (ICMP ping sockets, UDP-Lite) and other types EPERM, as the
// filter refuses them; without a namespace EPERM saying why. Under allow
// nothing is made here (the filter lets the tool make its own).
DatagramSocketDecision DecideDatagramSocket(const DatagramSocketRequest& r);

}  // namespace cordon::policy
