// inotify_add_watch(2). Landlock (ABI 7) does not check it, and the kernel
// asks only for DAC read permission, which a root tool has everywhere: a
// watch on /root/.ssh or another run's workspace would report the names
// and the timing of every change there. The supervisor resolves the path
// as the kernel would (the tool's cwd, "/proc/self", the last symlink
// followed unless IN_DONT_FOLLOW), admits it only beneath what the tool may
// read (the notify-all rung's read fence, or the same fence built from the
// policy at the first watch), opens it O_PATH beneath its root, and adds
// the watch to a copy of the tool's inotify instance (pidfd_getfd: the same
// instance) through /proc/self/fd: the inode checked is the inode watched.
#include <fcntl.h>
#include <limits.h>
#include <spdlog/spdlog.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <string>

#include "supervisor/caps.h"
#include "supervisor/emulator.h"
#include "supervisor/tool_creds.h"
#include "supervisor/tool_fd.h"
#include "supervisor/tool_memory.h"
#include "supervisor/tool_path.h"

namespace cordon::supervisor {
const ReadFence* Emulator::Readable() {
  if (read_fence_) return read_fence_.get();
  std::call_once(watch_fence_once_, [this] {
    SupervisorPermissions raised;  // the fence is the supervisor's, made once
    if (!opts_.read_fence_of) return;
    auto f = MakeReadFence(opts_.read_fence_of->policy, opts_.read_fence_of->tmp);
    if (!f) spdlog::warn("read fence: {}", Describe(f.error()));
    if (f) watch_fence_ = std::move(f.value());
  });
  return watch_fence_.get();
}

Reply Emulator::Watch(const Request& req, int inotify_fd, uint64_t path, uint32_t mask,
                      const std::function<bool()>& valid) {
  auto s = ReadToolString(req.tid, path, PATH_MAX);
  if (!s) return Reply::Errno(s.error().err);
  if (!valid()) return Reply::Errno(EACCES, "stale");
  if (s.value().empty()) return Reply::Errno(ENOENT);
  auto abs = Absolute(req.tid, AT_FDCWD, s.value());
  if (!abs) return Reply::Errno(abs.error().err);
  const ReadFence* fence = Readable();
  if (!fence) return Reply::Errno(EACCES, "watch " + *abs + ": the readable set is unknown");
  auto fd = fence->Open(ForTool(*abs, req.tid), O_PATH, !(mask & IN_DONT_FOLLOW));
  if (!fd) return Reply::Errno(fd.error().err, "watch " + *abs + ": " + fd.error().op);
  auto creds = ReadToolCreds(req.tid);
  if (!creds) return Reply::Errno(ESRCH);
  auto instance = GetToolFd(creds->tgid, inotify_fd);
  if (!instance && instance.error().err != EBADF && instance.error().err != ESRCH) {
    return NoPidfdGetfd("an inotify watch");
  }
  if (!instance) return Reply::Errno(EBADF);
  // The magic link is followed to the inode held, a symlink's own included.
  // The kernel asks for read permission on it: the tool's (Handle).
  int wd = ::inotify_add_watch(instance->get(), ProcPath(fd->get()).c_str(),
                               mask & ~static_cast<uint32_t>(IN_DONT_FOLLOW));
  if (wd < 0) return Reply::Errno(errno);
  Reply r;
  r.val = wd;
  return r;
}

}  // namespace cordon::supervisor
