#include "supervisor/notify_loop.h"

#include <seccomp.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "supervisor/uapi.h"

namespace cordon::supervisor {
namespace {

using namespace cordon::uapi;

}  // namespace

const char* SyscallName(int nr) {
  char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
  static thread_local char buf[64];
  std::snprintf(buf, sizeof buf, "%s", name ? name : "syscall");
  std::free(name);
  return buf;
}

NotifyLoop::NotifyLoop(int listener, std::shared_ptr<Emulator> emulator, bool threaded_blocking)
    : listener_(listener), emulator_(std::move(emulator)), threaded_blocking_(threaded_blocking) {
  SeccompNotifSizes sizes{};
  notif_size_ = sizeof(SeccompNotif);
  if (::syscall(SYS_seccomp, kSeccompGetNotifSizes, 0, &sizes) == 0) {
    notif_size_ = std::max<size_t>(notif_size_, sizes.seccomp_notif);
  }
  // 6.6+: wake the supervisor on the same CPU as the tool; saves a few µs a
  // round trip. Absent on older kernels: harmless.
  ::ioctl(listener_, kIoctlNotifSetFlags, kUserNotifFdSyncWakeUp);
}

NotifyLoop::~NotifyLoop() { Shutdown(); }

void NotifyLoop::OnReadable() {
  alignas(8) unsigned char buf[512] = {};
  auto* n = reinterpret_cast<SeccompNotif*>(buf);
  if (notif_size_ > sizeof buf) return;
  if (::ioctl(listener_, kIoctlNotifRecv, n) != 0) return;  // ENOENT: the tool moved on
  Request req;
  req.id = n->id;
  req.tid = static_cast<pid_t>(n->pid);
  req.nr = n->data.nr;
  std::memcpy(req.args, n->data.args, sizeof req.args);
  if (threaded_blocking_ && Emulator::MayBlock(req.nr)) {
    std::lock_guard<std::mutex> l(threads_mu_);
    threads_.emplace_back([this, req] {
      Reply r = emulator_->Handle(req, [this, id = req.id] {
        return ::ioctl(listener_, kIoctlNotifIdValid, &id) == 0;
      });
      Answer(req, std::move(r));
    });
    return;
  }
  Reply r = emulator_->Handle(req, [this, id = req.id] {
    return ::ioctl(listener_, kIoctlNotifIdValid, &id) == 0;
  });
  Answer(req, std::move(r));
}

void NotifyLoop::Answer(const Request& req, Reply reply) {
  answered_.fetch_add(1, std::memory_order_relaxed);
  if (emulator_->options().on_decision) emulator_->options().on_decision(req, reply);
  if (reply.install.valid()) {
    SeccompNotifAddfd add{req.id, kAddfdFlagSend, static_cast<uint32_t>(reply.install.get()), 0,
                          reply.install_flags};
    // The new fd number is the tool's syscall result.
    ::ioctl(listener_, kIoctlNotifAddfd, &add);
    return;
  }
  SeccompNotifResp resp{req.id, reply.val, 0, 0};
  if (reply.continue_syscall) {
    resp.flags = kUserNotifFlagContinue;
  } else if (reply.error != 0) {
    resp.error = -reply.error;
    if (!reply.why.empty() && (reply.error == EACCES || reply.error == EPERM)) {
      spdlog::info("denied {} by pid {}: {}", SyscallName(req.nr), req.tid, reply.why);
    }
  }
  ::ioctl(listener_, kIoctlNotifSend, &resp);
}

void NotifyLoop::Shutdown() {
  if (emulator_->options().on_shutdown) emulator_->options().on_shutdown();
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> l(threads_mu_);
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
}

}  // namespace cordon::supervisor
