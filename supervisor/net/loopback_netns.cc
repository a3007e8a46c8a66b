#include "supervisor/net/loopback_netns.h"

#include <linux/capability.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "supervisor/caps.h"
#include "supervisor/fd_passing.h"

namespace cordon::supervisor {
namespace {

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

// The child's first message: how the namespace came to be, or at which
// step and with which errno it did not.
enum Step : int { kMade = 0, kUnshare = 1, kLoopbackUp = 2, kDropCaps = 3 };
struct ChildStatus {
  int err = 0;
  int step = kMade;
  int user_ns = 0;
};
struct Ask {
  int domain, type, protocol;
};
struct Answer {
  int err;
};

const char* StepName(int step) {
  switch (step) {
    case kUnshare:
      return "unshare(CLONE_NEWNET), and with CLONE_NEWUSER";
    case kLoopbackUp:
      return "bringing lo up";
    case kDropCaps:
      return "dropping capabilities";
  }
  return "the namespace's child";
}

// Everything below until Start runs in the forked child of a process with
// threads: raw system calls only, no allocation, no lock.

int BringLoopbackUp() {
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return errno;
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, "lo", 3);
  int err = 0;
  if (::ioctl(s, SIOCGIFFLAGS, &ifr) != 0) {
    err = errno;
  } else {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    if (::ioctl(s, SIOCSIFFLAGS, &ifr) != 0) err = errno;
  }
  ::close(s);
  return err;
}

// Empties the effective, permitted and inheritable sets: the child makes
// sockets and nothing else.
int DropCaps() {
  __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct d[2] = {};
  return ::syscall(SYS_capset, &h, d) == 0 ? 0 : errno;
}

// Closes every descriptor but `keep`: the supervisor's (the notify
// listener, the tool's pipes) are no business of the child's, and a pipe
// it held would keep a reader of cordon's output waiting.
void CloseAllBut(int keep) {
  if (keep > 0 && ::syscall(SYS_close_range, 0u, static_cast<unsigned>(keep - 1), 0u) != 0) {
    for (int fd = 0; fd < keep; ++fd) ::close(fd);
  }
  if (::syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0u, 0u) != 0) {
    for (int fd = keep + 1; fd < 65536; ++fd) ::close(fd);
  }
}

bool Allowed(const Ask& a) {
  constexpr int kTypeMask = 0xf;
  return (a.domain == AF_INET || a.domain == AF_INET6) && (a.type & kTypeMask) == SOCK_DGRAM &&
         (a.type & ~(kTypeMask | SOCK_NONBLOCK | SOCK_CLOEXEC)) == 0 &&
         (a.protocol == 0 || a.protocol == IPPROTO_UDP);
}

[[noreturn]] void Serve(int ch, bool make_only) {
  CloseAllBut(ch);
  ChildStatus st;
  if (::unshare(CLONE_NEWNET) != 0) {
    // No CAP_SYS_ADMIN (not root, a container): a user namespace of our
    // own holds the network namespace and the rights to bring lo up.
    st.user_ns = 1;
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
      st.err = errno;
      st.step = kUnshare;
    }
  }
  if (st.err == 0 && (st.err = BringLoopbackUp()) != 0) st.step = kLoopbackUp;
  if (st.err == 0 && (st.err = DropCaps()) != 0) st.step = kDropCaps;
  (void)::send(ch, &st, sizeof st, MSG_NOSIGNAL);
  if (st.err != 0 || make_only) ::_exit(0);
  for (;;) {
    Ask a;
    ssize_t n = ::recv(ch, &a, sizeof a, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof a)) ::_exit(0);  // the supervisor is gone
    Answer ans{0};
    int fd = -1;
    if (!Allowed(a)) {
      ans.err = EPERM;
    } else if ((fd = ::socket(a.domain, a.type | SOCK_CLOEXEC, a.protocol)) < 0) {
      ans.err = errno;
    }
    (void)SendFdRawErrno(ch, &ans, sizeof ans, fd);
    if (fd >= 0) ::close(fd);
  }
}

// Forks the child and reads its status. On success *channel and *pid hold
// it (make_only: it has exited or is exiting).
Result<ChildStatus> Fork(bool make_only, Fd* channel, pid_t* pid) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    return Errno("socketpair");
  }
  Fd ours(sv[0]), theirs(sv[1]);
  {
    // unshare(CLONE_NEWNET) needs CAP_SYS_ADMIN in the effective set, which
    // a notify thread keeps lowered (caps.h).
    SupervisorPermissions raise;
    *pid = ::fork();
    if (*pid == 0) Serve(theirs.get(), make_only);
  }
  if (*pid < 0) return Errno("fork");
  theirs.reset();
  ChildStatus st;
  if (int err = ReadChildStatus(ours.get(), &st, sizeof st, 10000); err != 0) {
    ::kill(*pid, SIGKILL);
    ::waitpid(*pid, nullptr, 0);
    return SysError{err, "the namespace's child"};
  }
  if (st.err != 0 || make_only) {
    ::waitpid(*pid, nullptr, 0);
    if (st.err != 0) return SysError{st.err, StepName(st.step)};
  }
  *channel = std::move(ours);
  return st;
}

uint64_t Cookie(int sock) {
  uint64_t cookie = 0;
  socklen_t len = sizeof cookie;
  if (::getsockopt(sock, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) != 0) return 0;
  return cookie;
}

}  // namespace

Result<std::unique_ptr<LoopbackNetns>> LoopbackNetns::Start() {
  Fd channel;
  pid_t pid = -1;
  auto st = Fork(false, &channel, &pid);
  if (!st) return st.error();
  std::unique_ptr<LoopbackNetns> ns(new LoopbackNetns(pid, std::move(channel), st->user_ns != 0));
  auto probe = ns->MakeSocket(AF_INET, SOCK_DGRAM, 0);
  if (!probe) return probe.error();
  ns->cookie_ = Cookie(probe->get());
  return ns;
}

LoopbackNetns::~LoopbackNetns() {
  channel_.reset();
  ::waitpid(pid_, nullptr, 0);  // ECHILD if the launcher reaped it already
}

Result<Fd> LoopbackNetns::MakeSocket(int domain, int type, int protocol) {
  std::lock_guard<std::mutex> l(mu_);
  if (!channel_) return SysError{EPIPE, "private loopback"};
  Ask a{domain, type, protocol};
  ssize_t n;
  do {
    n = ::send(channel_.get(), &a, sizeof a, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof a)) return Errno("send", "private loopback");
  Answer ans{EPROTO};
  auto sock = RecvFd(channel_.get(), &ans, sizeof ans);
  if (sock) return std::move(sock.value());
  if (sock.error().err != EPROTO) {
    channel_.reset();  // the child is gone: no socket will come again
    return SysError{sock.error().err, "recvmsg", "private loopback"};
  }
  return SysError{ans.err != 0 ? ans.err : EPROTO, "socket", "private loopback"};
}

bool LoopbackNetns::Holds(int sock) const { return cookie_ != 0 && Cookie(sock) == cookie_; }

LoopbackNetnsProbe ProbeLoopbackNetns() {
  Fd channel;
  pid_t pid = -1;
  auto st = Fork(true, &channel, &pid);
  LoopbackNetnsProbe out;
  if (!st) {
    out.detail = std::string(st.error().op) + ": " + std::strerror(st.error().err);
    return out;
  }
  out.available = true;
  out.detail = st->user_ns ? "user and network namespace" : "network namespace";
  return out;
}

}  // namespace cordon::supervisor
