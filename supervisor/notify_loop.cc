#include "supervisor/notify_loop.h"

#include <poll.h>
#include <seccomp.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "supervisor/caps.h"
#include "supervisor/creation_umask.h"
#include "supervisor/uapi.h"

namespace cordon::supervisor {
namespace {

using namespace cordon::uapi;

}  // namespace

const char* SyscallName(int nr) {
  // Newer than Debian 12's libseccomp, which knows them by no name.
  switch (nr) {
    case kNrSetxattrat:
      return "setxattrat";
    case kNrRemovexattrat:
      return "removexattrat";
    case kNrFileSetattr:
      return "file_setattr";
    default:
      break;
  }
  char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
  static thread_local char buf[64];
  std::snprintf(buf, sizeof buf, "%s", name ? name : "syscall");
  std::free(name);
  return buf;
}

NotifyLoop::NotifyLoop(Fd listener, std::shared_ptr<Emulator> emulator,
                       std::shared_ptr<RefusalLog> refusals)
    : listener_(std::move(listener)), emulator_(std::move(emulator)), refusals_(std::move(refusals)) {
  SeccompNotifSizes sizes{};
  notif_size_ = sizeof(SeccompNotif);
  if (::syscall(SYS_seccomp, kSeccompGetNotifSizes, 0, &sizes) == 0) {
    notif_size_ = std::max<size_t>(notif_size_, sizes.seccomp_notif);
  }
  // 6.6+: the tool and the supervisor hand the CPU to each other instead of
  // waking on another one; saves a few µs a round trip. Older kernels
  // refuse the flag (EINVAL) and keep the plain wake-up.
  if (::ioctl(listener_.get(), kIoctlNotifSetFlags,
              static_cast<unsigned long>(kUserNotifFdSyncWakeUp)) != 0) {
    spdlog::debug("seccomp: no SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: {}", std::strerror(errno));
  }
  receiver_ = std::thread([this] { Run(); });
}

NotifyLoop::~NotifyLoop() {
  Shutdown();
  if (receiver_.joinable()) receiver_.join();
  Shutdown();  // deferred decisions started before the stop was seen
}

void NotifyLoop::Run() {
  // This thread acts for the tool: lowered once for its life, so Handle's
  // own ToolPermissions costs no syscall per request. Threads it starts
  // (deferred decisions) inherit the lowered set.
  ToolPermissions as_tool;
  // Files are created here with the tool's umask alone (creation_umask.h).
  if (!CreationUmask::OwnThread()) {
    spdlog::debug("notify: no umask of its own (unshare(CLONE_FS): {}); modes put right after",
                  std::strerror(errno));
  }
  alignas(8) unsigned char buf[512];
  auto* n = reinterpret_cast<SeccompNotif*>(buf);
  if (notif_size_ > sizeof buf) return;
  for (;;) {
    std::memset(buf, 0, notif_size_);  // the kernel wants it zeroed
    if (::ioctl(listener_.get(), kIoctlNotifRecv, n) != 0) {
      if (errno == EINTR) continue;
      if (errno != ENOENT) return;
      // ENOENT: the tool's thread moved on, or no task uses the filter any
      // more (then the listener reports POLLHUP and nothing can come).
      pollfd p{listener_.get(), POLLIN, 0};
      if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)) && !(p.revents & POLLIN)) return;
      continue;
    }
    Request req;
    req.id = n->id;
    req.tid = static_cast<pid_t>(n->pid);
    req.nr = n->data.nr;
    std::memcpy(req.args, n->data.args, sizeof req.args);
    if (stopping_.load()) {
      Answer(req, Reply::Errno(EACCES, "the supervisor is stopping"));
      continue;
    }
    int fd = listener_.get();
    auto valid = [fd, id = req.id] { return ::ioctl(fd, kIoctlNotifIdValid, &id) == 0; };
    Reply r = emulator_->Handle(req, valid);
    // A decision that may wait comes back as the checked rest of the call,
    // run on another thread so other threads and processes of the tool go
    // on: a network call's on a capless one, anything else on a thread of
    // its own that acts as the tool.
    if (r.later) {
      bool taken =
          r.later_on == Reply::Worker::kCapless
              ? capless_.Submit([this, req, later = std::move(r.later)] { Answer(req, later()); })
              : Defer(req, std::move(r.later));
      if (taken) continue;
      r = Reply::Errno(EACCES, "the supervisor is stopping");
    }
    Answer(req, std::move(r));
  }
}

bool NotifyLoop::Defer(const Request& req, std::function<Reply()> later) {
  std::lock_guard<std::mutex> l(threads_mu_);
  if (stopping_.load()) return false;
  std::erase_if(deferred_, [](Deferred& d) {
    if (!d.done->load()) return false;
    d.thread.join();
    return true;
  });
  auto done = std::make_shared<std::atomic<bool>>(false);
  deferred_.push_back({std::thread([this, req, later = std::move(later), done] {
                         // Acts for the tool, as Run's thread does (its
                         // lowered set is inherited; this marks it so the
                         // supervisor's own business raises it again).
                         ToolPermissions as_tool;
                         Answer(req, as_tool.lowered()
                                         ? later()
                                         : Reply::Errno(EACCES, "cannot lower capabilities"));
                         done->store(true);
                       }),
                       done});
  return true;
}

void NotifyLoop::Answer(const Request& req, Reply reply) {
  answered_.fetch_add(1, std::memory_order_relaxed);
  if (emulator_->options().observer) emulator_->options().observer->Decided(req, reply);
  if (reply.install.valid()) {
    // The new fd number is the tool's syscall result: sent with the install
    // in one ioctl, unless a truncate has to come between the two.
    const bool truncate = reply.truncate_installed || reply.after_install;
    const bool at = reply.install_at >= 0;
    SeccompNotifAddfd add{req.id, at ? kAddfdFlagSetfd : truncate ? 0 : kAddfdFlagSend,
                          static_cast<uint32_t>(reply.install.get()),
                          at ? static_cast<uint32_t>(reply.install_at) : 0, reply.install_flags};
    int rc;
    while ((rc = ::ioctl(listener_.get(), kIoctlNotifAddfd, &add)) < 0 && errno == EINTR) {
    }
    if (rc >= 0 && at) {
      SendResponse(req, reply);  // its val, as the call returns
      return;
    }
    if (rc >= 0 && !truncate) return;
    if (rc >= 0) {
      // Should the truncate fail, the tool's call fails with its errno and
      // the fd number it was given stays open in the tool, unknown to it.
      const int err = reply.after_install             ? reply.after_install()
                      : ::ftruncate(reply.install.get(), 0) == 0 ? 0
                                                                 : errno;
      if (err == 0) {
        reply = Reply{};
        reply.val = rc;
      } else {
        reply = Reply::Errno(err, "after install");
      }
      SendResponse(req, reply);
      return;
    }
    int err = errno;
    if (reply.undo) reply.undo();
    // ENOENT: the notification is gone (its thread was interrupted or
    // died; a restarted open finds no file of ours in its way). Any other
    // failure (EMFILE in the tool, a file the kernel will not install)
    // leaves it pending: answer with the error, or the tool's syscall
    // waits forever.
    if (err == ENOENT) return;
    spdlog::info("{} by pid {}: the fd could not be installed: {}", SyscallName(req.nr), req.tid,
                 std::strerror(err));
    reply = Reply::Errno(err, std::string("fd not installed: ") + std::strerror(err));
    if (emulator_->options().observer) emulator_->options().observer->Decided(req, reply);
  }
  SendResponse(req, reply);
}

void NotifyLoop::SendResponse(const Request& req, const Reply& reply) {
  SeccompNotifResp resp{req.id, reply.val, 0, 0};
  if (reply.continue_syscall) {
    resp.flags = kUserNotifFlagContinue;
  } else if (reply.error != 0) {
    resp.error = -reply.error;
  }
  const bool delivered = ::ioctl(listener_.get(), kIoctlNotifSend, &resp) == 0;
  // ECONNREFUSED: a loopback listener not of this run; ENETUNREACH: a UDP
  // connect beyond the run's private loopback (policy/loopback.h).
  if (reply.error != 0 && !reply.continue_syscall && !reply.why.empty() &&
      (reply.error == EACCES || reply.error == EPERM || reply.error == ECONNREFUSED ||
       reply.error == ENETUNREACH)) {
    spdlog::debug("denied {} by pid {}: {}{}", SyscallName(req.nr), req.tid, reply.why,
                  delivered ? "" : " (the call was gone)");
    // Told only when the tool saw it: a call interrupted by a signal (its
    // notification gone, ENOENT) is restarted and decided again.
    if (refusals_ && delivered) {
      const std::string what = std::string(SyscallName(req.nr)) + ": " + reply.why;
      if (reply.error == ENETUNREACH) {
        refusals_->RefusedIfFailed(what, reply.hint);
      } else {
        refusals_->Refused(what, reply.hint);
      }
    }
  }
}

void NotifyLoop::Shutdown() {
  std::vector<Deferred> deferred;
  {
    std::lock_guard<std::mutex> l(threads_mu_);
    if (!stopping_.exchange(true)) emulator_->gates().Shutdown();
    deferred.swap(deferred_);
  }
  emulator_->InterruptBlockingCalls();
  for (auto& d : deferred) d.thread.join();
  capless_.Stop();
}

}  // namespace cordon::supervisor
