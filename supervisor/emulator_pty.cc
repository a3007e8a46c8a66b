// Pseudo-terminals the tool makes for itself (policy/terminal.h): /dev/ptmx
// opened for it, with the number of each pair it made recorded, and
// /dev/pts/N of such a pair while it holds the pair's master. Both are
// opened here, with O_NOCTTY (a tool that wants a controlling terminal
// asks with TIOCSCTTY on the fd it holds), and installed with ADDFD.
#include <dirent.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "supervisor/emulator.h"
#include "supervisor/tool_creds.h"

namespace cordon::supervisor {
namespace {

// Unix98 pty subsidiaries: majors 136..143, 256 minors each (devices.txt).
constexpr unsigned kPtsFirstMajor = 136;

// Whether thread group `tgid` holds the master of pty `n`: an fd of it
// opened from ptmx whose fdinfo says "tty-index: n".
bool HoldsMaster(pid_t tgid, int n) {
  const std::string base = "/proc/" + std::to_string(tgid);
  DIR* dir = ::opendir((base + "/fd").c_str());
  if (dir == nullptr) return false;
  bool held = false;
  while (!held) {
    const dirent* e = ::readdir(dir);
    if (e == nullptr) break;
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char link[64];
    ssize_t len = ::readlink((base + "/fd/" + e->d_name).c_str(), link, sizeof link - 1);
    if (len <= 0) continue;
    link[len] = 0;
    if (std::strcmp(link, "/dev/ptmx") != 0 && std::strcmp(link, "/dev/pts/ptmx") != 0) continue;
    Fd info(::open((base + "/fdinfo/" + e->d_name).c_str(), O_RDONLY | O_CLOEXEC));
    char buf[512];
    ssize_t got = info ? ::read(info.get(), buf, sizeof buf - 1) : -1;
    if (got <= 0) continue;
    buf[got] = 0;
    const char* idx = std::strstr(buf, "tty-index:");
    held = idx != nullptr && std::atoi(idx + std::strlen("tty-index:")) == n;
  }
  ::closedir(dir);
  return held;
}

// The controlling terminal of thread `tid` (tty_nr of /proc/TID/stat, a
// device number; 0: none). -1 when it cannot be read.
long long ControllingTty(pid_t tid) {
  Fd fd(::open(("/proc/" + std::to_string(tid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC));
  char buf[1024];
  ssize_t n = fd ? ::read(fd.get(), buf, sizeof buf - 1) : -1;
  if (n <= 0) return -1;
  buf[n] = 0;
  // "pid (comm) state ppid pgrp session tty_nr ...": comm may hold anything.
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr) return -1;
  long long tty = -1;
  char state = 0;
  long long ppid = 0, pgrp = 0, session = 0;
  if (std::sscanf(p + 1, " %c %lld %lld %lld %lld", &state, &ppid, &pgrp, &session, &tty) != 5) {
    return -1;
  }
  return tty;
}

}  // namespace

Reply Emulator::OpenTerminal(const Request& req, policy::TerminalPath t, uint64_t flags,
                             const std::function<bool()>& valid) {
  if (t.kind == policy::TerminalKind::kControlling) {
    const long long tty = ControllingTty(req.tid);
    if (!valid()) return Reply::Errno(EACCES, "stale");
    if (tty < 0) return Reply::Errno(ESRCH);
    if (tty == 0) return Reply::Errno(ENXIO);  // none: as the kernel answers, nothing refused
    const auto dev = static_cast<dev_t>(tty);
    if (major(dev) < kPtsFirstMajor || major(dev) >= kPtsFirstMajor + 8) {
      return Reply::Errno(EACCES, "open /dev/tty: a terminal this run did not make");
    }
    t.kind = policy::TerminalKind::kSubsidiary;
    t.number = static_cast<int>((major(dev) - kPtsFirstMajor) * 256 + minor(dev));
  }
  const int kept = static_cast<int>(flags & (O_ACCMODE | O_NONBLOCK | O_APPEND));
  Reply rep;
  rep.install_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
  if (t.kind == policy::TerminalKind::kMaster) {
    Fd fd(::open("/dev/ptmx", kept | O_NOCTTY | O_CLOEXEC));
    if (!fd) return Reply::Errno(errno);
    int n = -1;
    if (::ioctl(fd.get(), TIOCGPTN, &n) != 0) return Reply::Errno(errno);
    {
      std::lock_guard<std::mutex> l(ptys_mu_);
      ptys_.insert(n);
    }
    rep.install = std::move(fd);
    return rep;
  }
  bool made;
  {
    std::lock_guard<std::mutex> l(ptys_mu_);
    made = ptys_.count(t.number) != 0;
  }
  auto creds = ReadToolCreds(req.tid);
  const bool held = creds && HoldsMaster(creds->tgid, t.number);
  if (!valid()) return Reply::Errno(EACCES, "stale");
  const std::string what = "open /dev/pts/" + std::to_string(t.number);
  if (const char* why = policy::TerminalRefusal(t, made, held)) {
    return Reply::Errno(EACCES, what + ": " + why);
  }
  Fd fd(::open(("/dev/pts/" + std::to_string(t.number)).c_str(), kept | O_NOCTTY | O_CLOEXEC));
  if (!fd) return Reply::Errno(errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Reply::Errno(errno);
  const unsigned index = (major(st.st_rdev) - kPtsFirstMajor) * 256 + minor(st.st_rdev);
  if (!S_ISCHR(st.st_mode) || major(st.st_rdev) < kPtsFirstMajor ||
      index != static_cast<unsigned>(t.number)) {
    return Reply::Errno(EACCES, what + ": not that pseudo-terminal");
  }
  rep.install = std::move(fd);
  return rep;
}

}  // namespace cordon::supervisor
