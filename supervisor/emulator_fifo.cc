// FIFOs the tool makes (mkfifo, GNU make's jobserver, Python's
// os.mkfifo): made where a regular file may be (policy/decide.h), opened
// at either end while they are the run's own, and removed at the run's
// end if still at their name.
//
// An open of a FIFO waits for the other end (a writer for a reader's
// blocking open, a reader for a writer's). The emulator's opens never
// wait (OpenWithoutWaiting); a FIFO the run made is opened again here
// with the tool's own flags, on a deferred thread when the open may wait,
// so other calls are answered meanwhile, and BlockingCalls cuts it short
// when the run stops.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/emulator.h"
#include "supervisor/read_fence.h"
#include "supervisor/tool_fd.h"

namespace cordon::supervisor {

bool Emulator::MadeFifo(const struct stat& st) const {
  return S_ISFIFO(st.st_mode) && created_.Contains(st.st_dev, st.st_ino) &&
         !laundered_.Contains(st.st_dev, st.st_ino);
}

Reply Emulator::OpenFifo(std::shared_ptr<Fd> held, uint64_t flags) {
  // The tool's flags but for what made or resolved the name (done) and
  // O_CLOEXEC, which is the installed descriptor's.
  constexpr uint64_t kDone = O_CREAT | O_EXCL | O_TRUNC | O_NOFOLLOW | O_CLOEXEC;
  const int reopen = static_cast<int>(flags & ~kDone) | O_NOCTTY | O_CLOEXEC;
  auto open = [this, held, reopen, flags]() -> Reply {
    Fd fd(blocking_.Run([&] { return ::open(ProcPath(held->get()).c_str(), reopen); }));
    if (!fd) return Reply::Errno(errno);
    Reply r;
    r.install = std::move(fd);
    r.install_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
    return r;
  };
  if (flags & O_NONBLOCK) return open();  // never waits: ENXIO, as the kernel says
  return Later(std::move(open));
}

std::optional<Reply> Emulator::ReadFifo(const std::string& target, const std::string& abs,
                                        uint64_t flags) {
  // An open is an event the other end sees (a writer waiting in open(2)
  // goes on), so the name is held O_PATH and looked at first.
  if (flags & O_PATH) return std::nullopt;
  Located at;
  auto look = read_fence_->Open(target, O_PATH, !(flags & O_NOFOLLOW), &at);
  struct stat st;
  if (!look || ::fstat(look->get(), &st) != 0 || !S_ISFIFO(st.st_mode)) return std::nullopt;
  if (!MadeFifo(st)) return Reply::Errno(EACCES, "read " + abs + ": special file");
  if (auto refused = RefuseRead(*read_fence_, at, st, abs)) return refused;
  return OpenFifo(std::make_shared<Fd>(std::move(look.value())), flags);
}

void Emulator::MadeFifoAt(const std::string& abs, const struct stat& st) {
  std::lock_guard<std::mutex> l(end_lists_mu_);
  fifos_.push_back({abs, {st.st_dev, st.st_ino}});
}

void Emulator::MovedFifo(const struct stat& st, const std::string& abs) {
  std::lock_guard<std::mutex> l(end_lists_mu_);
  for (auto& [at, id] : fifos_) {
    if (id.first == st.st_dev && id.second == st.st_ino) at = abs;
  }
}

void Emulator::RemoveFifosLeft() {
  std::lock_guard<std::mutex> l(end_lists_mu_);
  for (const auto& [abs, id] : fifos_) {
    auto loc = rules().roots.Locate(abs);
    if (!loc) continue;
    auto parent = WriteRoots::OpenParent(loc.value());
    struct stat st;
    if (parent && ::fstatat(parent->get(), loc->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISFIFO(st.st_mode) && st.st_dev == id.first && st.st_ino == id.second &&
        ::unlinkat(parent->get(), loc->name.c_str(), 0) == 0) {
      spdlog::debug("removed {}, a FIFO the run made", abs);
    }
  }
  fifos_.clear();
}

}  // namespace cordon::supervisor
