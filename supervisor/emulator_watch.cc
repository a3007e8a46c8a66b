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
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "supervisor/emulator.h"
#include "supervisor/tool_creds.h"
#include "supervisor/tool_fd.h"
#include "supervisor/tool_memory.h"
#include "supervisor/tool_path.h"

namespace cordon::supervisor {
namespace {

// An O_PATH fd for `target` if the tool may read it. Without `follow` a
// last component that is a symlink is the one held: canonical parent, then
// the name, opened O_NOFOLLOW.
Result<Fd> OpenReadable(const ReadFence& fence, std::string target, bool follow) {
  std::string name;
  if (!follow) {
    while (target.size() > 1 && target.back() == '/') target.pop_back();
    size_t slash = target.rfind('/');  // absolute: always found
    std::string last = target.substr(slash + 1);
    if (!last.empty() && last != "." && last != "..") {  // a dot entry is no symlink
      name = last;
      target = slash == 0 ? "/" : target.substr(0, slash);
    }
  }
  char real[PATH_MAX];
  if (name.empty() && ::realpath(target.c_str(), real) != nullptr &&
      std::find(fence.files.begin(), fence.files.end(), real) != fence.files.end()) {
    // A single granted file: its canonical path has no symlink left.
    Fd fd(::open(real, O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) return Errno("open", real);
    return fd;
  }
  auto loc = Canonical(fence.readable, target);
  if (!loc) return loc.error();
  std::string rel = loc->rel;
  if (!name.empty()) rel = rel.empty() ? name : rel + "/" + name;
  return WriteRoots::OpenBeneath(*loc->root, rel, O_PATH | (name.empty() ? 0 : O_NOFOLLOW), 0);
}

}  // namespace

const ReadFence* Emulator::Readable() {
  if (read_fence_) return read_fence_.get();
  std::call_once(watch_fence_once_, [this] {
    if (opts_.read_fence_factory) watch_fence_ = opts_.read_fence_factory();
  });
  return watch_fence_.get();
}

Reply Emulator::Watch(const Request& req, int inotify_fd, uint64_t path, uint32_t mask,
                      const std::function<bool()>& valid) {
  auto s = ReadToolString(req.tid, path, PATH_MAX);
  if (!s) return Reply::Errno(s.error().err);
  if (!valid()) return Reply::Errno(EACCES, "stale");
  std::string abs = s.value();
  if (abs.empty()) return Reply::Errno(ENOENT);
  if (abs[0] != '/') {
    auto base = BaseDir(req.tid, AT_FDCWD);
    if (!base) return Reply::Errno(base.error().err);
    abs = base.value() + "/" + abs;
  }
  const ReadFence* fence = Readable();
  if (!fence) return Reply::Errno(EACCES, "watch " + abs + ": the readable set is unknown");
  std::string target = ForTool(abs, req.tid);
  auto fd = OpenReadable(*fence, target, !(mask & IN_DONT_FOLLOW));
  if (!fd) return Reply::Errno(fd.error().err, "watch " + abs + ": " + fd.error().op);
  auto creds = ReadToolCreds(req.tid);
  if (!creds) return Reply::Errno(ESRCH);
  auto instance = GetToolFd(creds->tgid, inotify_fd);
  if (!instance) return Reply::Errno(EBADF);
  // The magic link is followed to the inode held, a symlink's own included.
  int wd = ::inotify_add_watch(instance->get(), ProcPath(fd->get()).c_str(),
                               mask & ~static_cast<uint32_t>(IN_DONT_FOLLOW));
  if (wd < 0) return Reply::Errno(errno);
  Reply r;
  r.val = wd;
  return r;
}

}  // namespace cordon::supervisor
