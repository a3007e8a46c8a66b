// The run's private loopback: a network namespace whose only interface is
// `lo` (up: 127.0.0.1 and ::1), where the tool's UDP sockets are made under
// a fenced network mode (policy/loopback.h, DecideDatagramSocket). A
// socket's namespace is fixed when it is made, so every sendto, sendmsg
// and connect on one reaches that namespace's loopback and nothing else:
// the tool's own UDP server and client talk, the host's UDP listeners (a
// DNS stub on 127.0.0.53, a test's listener) are out of reach, and no
// datagram needs looking at.
//
// The namespace is kept by a small child of the supervisor, forked at the
// first UDP socket of a run (a run that makes none pays nothing): it
// unshares a network namespace (CLONE_NEWNET, which needs CAP_SYS_ADMIN;
// else a user namespace with it, CLONE_NEWUSER | CLONE_NEWNET, where the
// kernel lets an unprivileged user make one), brings lo up, drops every
// capability, and then makes sockets on request over a socketpair, handing
// each back with SCM_RIGHTS. A child, not a thread: a thread could unshare
// a network namespace only with CAP_SYS_ADMIN (and a user namespace not at
// all: the supervisor has threads), nor setns into one owned by a user
// namespace. It ends when the supervisor's end of the pair closes (not by
// PR_SET_PDEATHSIG, which follows the thread that forked, a notify worker
// that may end first).
//
// Its memory is the supervisor's at the fork, copy-on-write (measured:
// about 300 KiB of its own).
//
// A user namespace's network namespace is owned by cordon's uid, which the
// tool shares: from the parent namespace it holds every capability over
// it, so through its UDP socket it may reconfigure this loopback (take lo
// down, add an address or a route), which reaches nothing beyond it
// either. setns, netlink and bpf stay refused by the filter.
//
// Where no namespace can be made (a container's seccomp profile refuses
// unshare, user namespaces are off), Start fails saying why, and the tool's
// UDP stays refused. Thread-safe: MakeSocket may be called from several
// threads.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "base/fd.h"
#include "base/result.h"

namespace cordon::supervisor {

class LoopbackNetns {
 public:
  // Forks the child and waits (a few seconds at most) for its namespace.
  // The calling thread's effective capabilities are raised to its
  // permitted set for the fork (a notify thread holds them lowered).
  static Result<std::unique_ptr<LoopbackNetns>> Start();
  // Closes the pair (the child exits) and reaps the child.
  ~LoopbackNetns();
  LoopbackNetns(const LoopbackNetns&) = delete;
  LoopbackNetns& operator=(const LoopbackNetns&) = delete;

  // socket(domain, type, protocol) made in the namespace: AF_INET or
  // AF_INET6, SOCK_DGRAM (SOCK_NONBLOCK kept, SOCK_CLOEXEC always set on
  // the supervisor's copy), protocol 0 or IPPROTO_UDP; the child refuses
  // anything else (EPERM).
  Result<Fd> MakeSocket(int domain, int type, int protocol);

  // Whether `sock` lives in this namespace: its SO_NETNS_COOKIE is this
  // one's. False when the kernel has no namespace cookies (before 5.14):
  // bind and connect on the tool's UDP sockets are then refused (sendto
  // and sendmsg still work), failing closed.
  bool Holds(int sock) const;

  // "network namespace" or "user and network namespace".
  const char* kind() const { return user_ns_ ? "user and network namespace" : "network namespace"; }

 private:
  LoopbackNetns(pid_t pid, Fd channel, bool user_ns)
      : pid_(pid), channel_(std::move(channel)), user_ns_(user_ns) {}

  pid_t pid_;
  std::mutex mu_;
  Fd channel_;  // guarded by mu_ (one request and its answer at a time)
  bool user_ns_;
  uint64_t cookie_ = 0;  // 0: unknown
};

// What Start would make on this machine, for `cordon doctor`: the kind of
// namespace, or why none can be made. Forks a child that exits at once.
struct LoopbackNetnsProbe {
  bool available = false;
  std::string detail;  // "network namespace", or why none: "unshare(...): EPERM"
};
LoopbackNetnsProbe ProbeLoopbackNetns();

}  // namespace cordon::supervisor
