// Stand-in sockets: bind(2) and connect(2) on the tool's AF_UNIX socket
// where the supervisor cannot take that socket, because the container's
// seccomp profile refuses pidfd_getfd (Docker's default allows it only with
// CAP_SYS_PTRACE). The supervisor makes a socket of the tool's type itself,
// performs the call on it (emulator_socket.cc, UnixName: the same checks as
// on a copy of the tool's) and installs it over the tool's descriptor
// number (SECCOMP_ADDFD_FLAG_SETFD), as dup2 would: race-free, the call is
// made on nothing the tool can change meanwhile.
//
// What the tool sees differently from a copy: socket options it set before
// the call are not carried over (the type, O_NONBLOCK and close-on-exec
// are), and another descriptor it dup'ed from the old socket still names the
// old, unbound one. A bound stream socket is kept here until the tool
// listens on it, so that listen(2), which also needs the socket, is made on
// it. A TCP or UDP socket (IPv4 or IPv6) is stood in for the same way, its
// type read from the socket inode's protocol name; other protocols fail with
// EBADF, and cordon says so once a run with what to do.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>

#include "base/fd.h"
#include "base/result.h"

namespace cordon::supervisor {

// One line of /proc/net/unix, for the socket with inode `ino`.
struct UnixSocketLine {
  int type = 0;        // SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET
  bool listening = false;
  bool named = false;  // bound to a name (a path or an abstract one)
};

// The line for inode `ino` in the text of /proc/net/unix; none when the
// inode is not there (the socket is not AF_UNIX) or the line is malformed.
std::optional<UnixSocketLine> FindUnixSocketLine(std::string_view table, ino_t ino);

struct ToolUnixSocket {
  ino_t ino = 0;
  UnixSocketLine line;
  bool nonblock = false;
  bool cloexec = false;
};

// What the tool's descriptor `fd` (of thread group `tgid`) is, read from
// /proc: ENOTSOCK when it is not a socket, EAFNOSUPPORT when it is not an
// AF_UNIX one, EBADF when there is no such descriptor.
Result<ToolUnixSocket> ReadToolUnixSocket(pid_t tgid, int fd);

// The inode of the socket the tool's descriptor `fd` names (ENOTSOCK, EBADF).
Result<ino_t> ToolSocketInode(pid_t tgid, int fd);

// A network socket of the tool's, as socket(2) made it: read from the
// socket inode's "system.sockprotoname" (TCP, TCPv6, UDP, UDPv6, PING,
// PINGv6), which the kernel keeps for every socket, bound or not.
struct ToolInetSocket {
  ino_t ino = 0;
  int domain = 0;  // AF_INET, AF_INET6
  int type = 0;    // SOCK_STREAM, SOCK_DGRAM
  int protocol = 0;
  bool nonblock = false;
  bool cloexec = false;
};

// The socket(2) arguments of a protocol name; domain 0 for any other.
ToolInetSocket InetSocketOf(std::string_view protocol_name);

// What the tool's descriptor `fd` is: EAFNOSUPPORT for a socket of another
// protocol (AF_UNIX: ReadToolUnixSocket), ENOTSOCK, EBADF.
Result<ToolInetSocket> ReadToolInetSocket(pid_t tgid, int fd);

// Bound stream sockets installed in the tool, until it listens on them.
// Bounded: the oldest goes first (its listen then fails with EBADF, as
// every listen here did before). Thread-safe.
class StandIns {
 public:
  void Keep(ino_t ino, Fd sock);
  // The socket kept for `ino`, handed over (none: not one of ours).
  std::optional<Fd> Take(ino_t ino);

 private:
  static constexpr size_t kMax = 64;
  std::mutex mu_;
  std::deque<std::pair<ino_t, Fd>> kept_;  // guarded by mu_
};

// The socket a call on the tool's TCP or UDP socket `fd` is made on: the
// stand-in kept when it was bound here (the tool's descriptor names it
// already: install_at -1), else a fresh one of the tool's type, to install
// at `fd` once the call succeeds. EAFNOSUPPORT for another protocol
// (nothing is taken), ENOTSOCK, EBADF when the socket cannot be read, or
// socket(2)'s own error.
struct InetStandIn {
  Fd sock;
  int install_at = -1;
  uint32_t install_flags = 0;  // O_CLOEXEC or 0
};
// Makes a datagram socket (domain, type with SOCK_NONBLOCK, protocol) for a
// stand-in: under a fenced network mode in the run's private loopback
// (net/loopback_netns.h), where the tool's own was made. Empty: socket(2)
// here.
using DatagramMaker = std::function<Result<Fd>(int domain, int type, int protocol)>;
Result<InetStandIn> MakeInetStandIn(StandIns& kept, pid_t tgid, int fd,
                                    const DatagramMaker& datagrams = {});

}  // namespace cordon::supervisor
