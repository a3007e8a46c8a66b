#include "supervisor/audit/landlock_reader.h"

#include <linux/audit.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "supervisor/kernel_audit.h"

namespace cordon::supervisor {
namespace {

// The initial PID namespace's inode number (PROC_PID_INIT_INO): the pids
// audit records carry are the ones seen from there.
constexpr ino_t kInitPidNsIno = 0xEFFFFFFCU;

bool InInitialPidNamespace() {
  struct stat st {};
  return ::stat("/proc/self/ns/pid", &st) == 0 && st.st_ino == kInitPidNsIno;
}

// An AUDIT_USER record through the kernel's queue: it comes back on the
// multicast group after every record queued before it. Needs
// CAP_AUDIT_WRITE. The kernel cuts the last byte, so the NUL goes with it.
bool SendMarker(int sock, const std::string& text) {
  return SendToKernelAudit(sock, AUDIT_USER, 0, std::string_view(text.c_str(), text.size() + 1));
}

}  // namespace

std::unique_ptr<LandlockAuditReader> LandlockAuditReader::Open(std::string run_id,
                                                               std::string* why) {
  switch (ProbeKernelAudit()) {
    case KernelAudit::kUnavailable:
      *why =
          "the kernel's audit subsystem cannot be asked here (no CONFIG_AUDIT, or no "
          "CAP_AUDIT_CONTROL)";
      return nullptr;
    case KernelAudit::kOff:
      *why = "kernel audit is off (auditctl -e 1 turns it on; cordon does not)";
      return nullptr;
    case KernelAudit::kOn:
      break;
  }
  if (!InInitialPidNamespace()) {
    *why =
        "cordon runs in a PID namespace of its own; the kernel's records name the initial one's "
        "pids";
    return nullptr;
  }
  Fd sock(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_AUDIT));
  if (!sock) {
    *why = std::string("audit netlink: ") + std::strerror(errno);
    return nullptr;
  }
  int rcvbuf = 4 << 20;
  (void)::setsockopt(sock.get(), SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf);
  sockaddr_nl group{};
  group.nl_family = AF_NETLINK;
  group.nl_groups = 1u << (AUDIT_NLGRP_READLOG - 1);
  if (::bind(sock.get(), reinterpret_cast<sockaddr*>(&group), sizeof group) != 0) {
    *why = errno == EPERM ? std::string("no CAP_AUDIT_READ to read the kernel's audit records")
                          : std::string("audit netlink bind: ") + std::strerror(errno);
    return nullptr;
  }
  Fd stop(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!stop) {
    *why = std::string("eventfd: ") + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<LandlockAuditReader> r(
      new LandlockAuditReader(std::move(sock), std::move(stop), std::move(run_id)));
  r->thread_ = std::thread([p = r.get()] { p->Loop(); });
  return r;
}

LandlockAuditReader::LandlockAuditReader(Fd sock, Fd stop, std::string run_id)
    : sock_(std::move(sock)), stop_(std::move(stop)), marker_(policy::LandlockMarker(run_id)) {}

LandlockAuditReader::~LandlockAuditReader() {
  const uint64_t one = 1;
  (void)!::write(stop_.get(), &one, sizeof one);
  if (thread_.joinable()) thread_.join();
}

void LandlockAuditReader::SetCreator(pid_t pid) {
  std::lock_guard<std::mutex> lock(mu_);
  records_.SetCreator(pid);
}

void LandlockAuditReader::Loop() {
  // An audit record's text is at most 8560 bytes (the kernel's
  // AUDIT_MESSAGE_TEXT_MAX); a longer datagram is cut, not lost.
  alignas(nlmsghdr) static thread_local char buf[16384];
  pollfd fds[2] = {{sock_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
  for (;;) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    for (;;) {
      const ssize_t n = ::recv(sock_.get(), buf, sizeof buf, 0);
      if (n < 0) {
        if (errno == ENOBUFS) {
          std::lock_guard<std::mutex> lock(mu_);
          ++lost_;
          continue;
        }
        break;  // EAGAIN: drained
      }
      const auto* h = reinterpret_cast<const nlmsghdr*>(buf);
      if (n < static_cast<ssize_t>(NLMSG_HDRLEN) || h->nlmsg_len < NLMSG_HDRLEN) continue;
      const size_t len = std::min<size_t>(h->nlmsg_len, static_cast<size_t>(n)) - NLMSG_HDRLEN;
      std::lock_guard<std::mutex> lock(mu_);
      records_.Feed(h->nlmsg_type, std::string_view(static_cast<const char*>(NLMSG_DATA(h)), len));
      seen_.notify_all();
    }
  }
}

LandlockAuditReader::Finished LandlockAuditReader::Finish(std::chrono::milliseconds wait) {
  Finished f;
  const bool marked = SendMarker(sock_.get(), marker_);
  {
    std::unique_lock<std::mutex> lock(mu_);
    // Without a marker nothing says the queue is drained: a short grace.
    const auto deadline = std::chrono::steady_clock::now() +
                          (marked ? wait : std::min(wait, std::chrono::milliseconds(50)));
    const bool done = seen_.wait_until(lock, deadline, [&] {
      return marked && records_.SawMarker(marker_) && records_.Deallocated();
    });
    f.account = records_.Account();
    if (lost_ > 0) {
      f.complete = false;
      f.incomplete_why =
          "the kernel dropped " + std::to_string(lost_) + " record(s) for cordon's socket";
    } else if (!marked) {
      f.complete = false;
      f.incomplete_why =
          "no end marker could be sent (no CAP_AUDIT_WRITE): late records may be missing";
    } else if (!done) {
      f.complete = false;
      f.incomplete_why = records_.SawMarker(marker_)
                             ? "the run's Landlock domain was not freed within the wait"
                             : "the end marker did not come back within the wait";
    }
  }
  const uint64_t one = 1;
  (void)!::write(stop_.get(), &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  return f;
}

}  // namespace cordon::supervisor
