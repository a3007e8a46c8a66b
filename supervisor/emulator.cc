#include "supervisor/emulator.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <seccomp.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>

#include "policy/fd_alias.h"
#include "supervisor/exec/tool_pin.h"
#include "supervisor/walk/dir_listing.h"
#include "supervisor/caps.h"
#include "supervisor/creation_umask.h"
#include "supervisor/tool_creds.h"
#include "supervisor/tool_fd.h"
#include "supervisor/tool_memory.h"
#include "supervisor/tool_path.h"
#include "supervisor/uapi.h"

namespace cordon::supervisor {
namespace {

constexpr uint64_t kBareTmpfile = 020000000;

// What open(2) honours with O_PATH (it ignores every other flag), and all
// openat2(2) accepts with it: anything more is EINVAL there.
constexpr uint64_t kOPathFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// No controlling terminal from an open made for the tool; O_PATH takes no
// such flag.
uint64_t NoCtty(uint64_t flags) { return (flags & O_PATH) ? flags : flags | O_NOCTTY; }

// The reply that installs `fd`, opened for the tool with `flags`. ADDFD
// cannot install an O_PATH file (seccomp_notify_addfd() takes it with
// fget(), which skips them: EBADF), so an O_PATH open the supervisor
// admitted is handed over as a read-only open of the same inode: what
// admitted it (the read fence, a writable root) grants reading it anyway.
// Only regular files and directories: reopening a FIFO or device acts on it.
Reply InstallReply(Fd fd, uint64_t flags) {
  Reply rep;
  rep.install_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
  if (flags & O_PATH) {
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) return Reply::Errno(errno);
    int dir = S_ISDIR(st.st_mode) ? O_DIRECTORY : 0;
    if (!dir && !S_ISREG(st.st_mode)) return Reply::Errno(EACCES, "O_PATH open of a special file");
    fd = Fd(::open(ProcPath(fd.get()).c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC | dir));
    if (!fd) return Reply::Errno(errno);
  }
  rep.install = std::move(fd);
  return rep;
}

// An open made for the tool must not wait on a FIFO: this thread would wait
// with it, and a FIFO nobody opens would hold cordon at its exit. So it is
// made with O_NONBLOCK added (unless the tool asked for it, or for O_PATH,
// which never waits and takes no other flag), and a FIFO, socket or device
// found is refused, as is ENXIO then (one with no reader). A lease's
// EWOULDBLOCK (a file server's, on a regular file) is opened again
// without: the kernel would wait for its break. `open(extra)` opens with
// `extra` added; *added says whether the open that answered had the
// O_NONBLOCK added (for ENXIO, and for RestoreStatusFlags).
template <typename OpenFn>
Result<Fd> OpenWithoutWaiting(uint64_t flags, const OpenFn& open, bool* added) {
  const uint64_t extra = (flags & (O_NONBLOCK | O_PATH)) ? 0 : O_NONBLOCK;
  Result<Fd> fd = open(extra);
  *added = extra != 0;
  if (!fd && extra && fd.error().err == EWOULDBLOCK) {
    *added = false;
    return open(0);
  }
  return fd;
}

// Puts back the file status flags `flags` asks for (F_SETFL's: O_APPEND,
// O_DIRECT, O_NOATIME, O_NONBLOCK) on a file OpenWithoutWaiting gave
// an O_NONBLOCK.
bool RestoreStatusFlags(int fd, uint64_t flags) {
  constexpr uint64_t kStatusFlags = O_APPEND | O_DIRECT | O_NOATIME | O_NONBLOCK;
  return ::fcntl(fd, F_SETFL, static_cast<int>(flags & kStatusFlags)) == 0;
}

}  // namespace

// born_ns is -1 when the filesystem keeps no birth time.
struct Emulator::EntryStat {
  struct stat st {};
  int64_t born_ns = -1;
};

// lstat and birth time in one statx (one syscall fewer per delete).
bool Emulator::StatEntry(int dirfd, const std::string& name, EntryStat& e) {
  struct statx stx {};
  if (::statx(dirfd, name.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &stx) != 0) {
    return false;
  }
  e.st = {};
  e.st.st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  e.st.st_ino = stx.stx_ino;
  e.st.st_mode = stx.stx_mode;
  e.st.st_nlink = stx.stx_nlink;
  e.st.st_uid = stx.stx_uid;
  e.st.st_gid = stx.stx_gid;
  e.st.st_size = static_cast<off_t>(stx.stx_size);
  e.born_ns = (stx.stx_mask & STATX_BTIME) ? static_cast<int64_t>(stx.stx_btime.tv_sec) * 1000000000 +
                                                 stx.stx_btime.tv_nsec
                                           : -1;
  return true;
}

Emulator::Emulator(WriteRoots roots, int64_t run_start_ns, EmulatorOptions opts,
                   std::unique_ptr<ReadFence> read_fence)
    : roots_(std::move(roots)),
      read_fence_(std::move(read_fence)),
      run_start_ns_(run_start_ns),
      opts_(std::move(opts)) {}

Emulator::~Emulator() {
  if (!made_shared_.load()) return;
  for (const WriteRoot& root : roots_.roots()) {
    if (!root.own_entries_only) continue;
    Fd dir(::openat(root.fd.get(), ".", kWalkDirFlags));
    if (!dir) continue;
    // Listed whole first, then removed: a listing is not changed under it.
    std::vector<std::string> files;
    auto buf = std::make_unique<char[]>(kListingBytes);
    ListDirectory(dir.get(), ShortReadEndsListing(dir.get()), buf.get(),
                          kListingBytes, [&](const dirent64& e) {
                            if (e.d_type == DT_REG || e.d_type == DT_UNKNOWN)
                              files.emplace_back(e.d_name);
                            return true;
                          });
    for (const std::string& name : files) {
      struct stat st;
      if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISREG(st.st_mode) && created_.Contains(st.st_dev, st.st_ino) &&
          ::unlinkat(dir.get(), name.c_str(), 0) == 0) {
        spdlog::debug("removed {}/{}, left by the tool", root.path, name);
      }
    }
  }
}

Result<Fd> ReadFence::Open(std::string abs, uint64_t flags, bool follow) const {
  // Looked up and opened with the tool's file permissions, not the
  // supervisor's: a capless root tool may not read another user's 0600
  // file or learn what a 0700 directory holds.
  ToolPermissions as_tool;
  if (!as_tool.lowered()) return SysError{EACCES, "cannot lower capabilities"};
  std::string name;
  if (!follow) {
    while (abs.size() > 1 && abs.back() == '/') abs.pop_back();
    size_t slash = abs.rfind('/');  // absolute: always found
    std::string last = abs.substr(slash + 1);
    if (!last.empty() && last != "." && last != "..") {  // a dot entry is no symlink
      name = last;
      abs = slash == 0 ? "/" : abs.substr(0, slash);
    }
  }
  char real[PATH_MAX];
  if (name.empty() && ::realpath(abs.c_str(), real) != nullptr &&
      std::find(files.begin(), files.end(), real) != files.end()) {
    // A single granted file: its canonical path has no symlink left.
    Fd fd(::open(real, static_cast<int>(flags) | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) return Errno("open", real);
    return fd;
  }
  auto loc = Canonical(readable, abs);
  if (!loc) return loc.error();
  std::string rel = loc->rel;
  if (!name.empty()) rel = rel.empty() ? name : rel + "/" + name;
  return WriteRoots::OpenBeneath(*loc->root, rel, flags | (name.empty() ? 0 : O_NOFOLLOW), 0);
}

Reply Emulator::OpenForRead(const Request& req, const std::string& abs, uint64_t flags) {
  const std::string target = ForTool(abs, req.tid);
  bool probed = false;
  auto fd = OpenWithoutWaiting(
      flags,
      [&](uint64_t extra) {
        // O_NOFOLLOW: a last-component link is opened as itself (ELOOP, or
        // refused below for O_PATH: ADDFD cannot hand over a link).
        return read_fence_->Open(target, NoCtty(flags) | extra, !(flags & O_NOFOLLOW));
      },
      &probed);
  if (!fd && probed && fd.error().err == ENXIO) {
    return Reply::Errno(EACCES, "read " + abs + ": special file");
  }
  if (!fd) return Reply::Errno(fd.error().err, "read " + abs + ": " + fd.error().op);
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return Reply::Errno(errno);
  if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISBLK(st.st_mode)) {
    return Reply::Errno(EACCES, "read " + abs + ": special file");
  }
  if (probed && !RestoreStatusFlags(fd->get(), flags)) return Reply::Errno(errno);
  return InstallReply(std::move(fd.value()), flags);
}

Reply Emulator::Exec(const Request& req, int dirfd, uint64_t path,
                     const std::function<bool()>& valid) {
  Reply cont;
  cont.continue_syscall = true;
  if (!read_fence_ && opts_.pins.empty() && !opts_.exec_gate) {
    return cont;  // Landlock's EXECUTE rights are the fence
  }
  // Without Landlock the check and the kernel's exec are not atomic: a
  // racing thread could swap the path in between (seccomp_unotify(2)). The
  // README says so; reads and writes stay race-free.
  auto s = ReadToolString(req.tid, path, PATH_MAX);
  if (!s) return Reply::Errno(s.error().err);
  if (!valid()) return Reply::Errno(EACCES, "stale");
  auto abs_or = Absolute(req.tid, dirfd, s.value());
  if (!abs_or && s.value().empty() && abs_or.error().err == ENOENT) {
    // An fd exec (AT_EMPTY_PATH) of a file with no name left, a memfd or a
    // deleted file: no pin and no readable path can be this file.
    return Reply::Errno(EACCES, "execute fd " + std::to_string(dirfd) + ": a file with no name");
  }
  if (!abs_or) return Reply::Errno(abs_or.error().err);
  const std::string& abs = abs_or.value();
  std::string target = ForTool(abs, req.tid);
  if (read_fence_) {
    auto loc = Canonical(read_fence_->executable, target);
    if (!loc) return Reply::Errno(loc.error().err, "execute " + abs + ": " + loc.error().op);
  }
  if (!opts_.pins.empty()) {
    // The pinned identity, re-hashed on the file the exec would load. The
    // supervisor's read: a binary the tool may run but not read (0711)
    // is hashed too. O_NONBLOCK: a FIFO at the path is refused below.
    Fd fd;
    {
      SupervisorPermissions raised;
      fd = Fd(::open(target.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    }
    struct stat st;
    if (!fd || ::fstat(fd.get(), &st) != 0) return Reply::Errno(errno);
    ExecDecision d = DecideExec(opts_.pins, st, fd.get());
    if (!d.allow) return Reply::Errno(d.err ? d.err : EACCES, "execute " + abs + ": " + d.reason);
    spdlog::debug("execute {}: {}", abs, d.reason);
  }
  if (opts_.exec_gate) {
    if (Status g = opts_.exec_gate(); !g) {
      return Reply::Errno(EACCES, "execute " + abs + ": " + Describe(g.error()));
    }
  }
  return cont;
}

Result<Emulator::Path> Emulator::ResolvePath(const Request& req, int dirfd, uint64_t addr,
                                             bool empty_ok, Change change) {
  auto s = ReadToolString(req.tid, addr, PATH_MAX);
  if (!s) return s.error().err == ENAMETOOLONG ? SysError{ENAMETOOLONG, "path"} : s.error();
  return Resolve(req, dirfd, std::move(s.value()), empty_ok, change);
}

Result<Emulator::Path> Emulator::Resolve(const Request& req, int dirfd, std::string path,
                                         bool empty_ok, Change change) {
  if (path.empty() && !empty_ok) return SysError{ENOENT, "empty path"};
  Path p;
  p.slash = TrailingSlash(path);
  auto abs = Absolute(req.tid, dirfd, path);
  if (!abs) return abs.error();
  p.abs = std::move(abs.value());
  auto loc = roots_.Locate(p.abs, change);
  if (!loc) return loc.error();
  p.loc = std::move(loc.value());
  return p;
}

Reply Emulator::Handle(const Request& r, const std::function<bool()>& valid, bool may_block) {
  ToolPermissions as_tool;  // free on the notify loop's threads, which hold one
  if (!as_tool.lowered()) return Reply::Errno(EACCES, "cannot lower capabilities");
  umask_.Seen(r.tid);
  const uint64_t* a = r.args;
  auto i = [&](int k) { return static_cast<int>(a[k]); };
  switch (r.nr) {
    case SCMP_SYS(open): return Open(r, AT_FDCWD, a[0], a[1], a[2], valid);
    case SCMP_SYS(openat): return Open(r, i(0), a[1], a[2], a[3], valid);
    case SCMP_SYS(creat): return Open(r, AT_FDCWD, a[0], O_CREAT | O_WRONLY | O_TRUNC, a[1], valid);
    case SCMP_SYS(unlink): return Unlink(r, AT_FDCWD, a[0], 0, valid, may_block);
    case SCMP_SYS(rmdir): return Unlink(r, AT_FDCWD, a[0], AT_REMOVEDIR, valid, may_block);
    case SCMP_SYS(unlinkat): return Unlink(r, i(0), a[1], i(2), valid, may_block);
    case SCMP_SYS(rename): return Rename(r, AT_FDCWD, a[0], AT_FDCWD, a[1], 0, valid);
    case SCMP_SYS(renameat): return Rename(r, i(0), a[1], i(2), a[3], 0, valid);
    case SCMP_SYS(renameat2):
      return Rename(r, i(0), a[1], i(2), a[3], static_cast<unsigned>(a[4]), valid);
    case SCMP_SYS(link): return Link(r, AT_FDCWD, a[0], AT_FDCWD, a[1], 0, valid);
    case SCMP_SYS(linkat): return Link(r, i(0), a[1], i(2), a[3], i(4), valid);
    case SCMP_SYS(symlink): return Create(r, AT_FDCWD, a[1], S_IFLNK, a[0], valid);
    case SCMP_SYS(symlinkat): return Create(r, i(1), a[2], S_IFLNK, a[0], valid);
    case SCMP_SYS(mkdir): return Create(r, AT_FDCWD, a[0], S_IFDIR, a[1], valid);
    case SCMP_SYS(mkdirat): return Create(r, i(0), a[1], S_IFDIR, a[2], valid);
    case SCMP_SYS(mknod): return Create(r, AT_FDCWD, a[0], S_IFREG, a[1], valid);
    case SCMP_SYS(mknodat): return Create(r, i(0), a[1], S_IFREG, a[2], valid);
    case SCMP_SYS(truncate):
    case SCMP_SYS(chmod):
    case SCMP_SYS(chown):
    case SCMP_SYS(utime):
    case SCMP_SYS(utimes):
    case SCMP_SYS(setxattr):
    case SCMP_SYS(removexattr): return Attr(r, AT_FDCWD, a[0], 0, r.nr, valid);
    case SCMP_SYS(lchown):
    case SCMP_SYS(lsetxattr):
    case SCMP_SYS(lremovexattr): return Attr(r, AT_FDCWD, a[0], AT_SYMLINK_NOFOLLOW, r.nr, valid);
    case SCMP_SYS(fchmodat):
    case SCMP_SYS(futimesat): return Attr(r, i(0), a[1], 0, r.nr, valid);
    case SCMP_SYS(fchownat): return Attr(r, i(0), a[1], i(4), r.nr, valid);
    case SCMP_SYS(utimensat):
      if (a[1] == 0) return FdAttr(r, i(0), r.nr, valid);  // futimens(fd)
      return Attr(r, i(0), a[1], i(3), r.nr, valid);
    case SCMP_SYS(fchmod):
    case SCMP_SYS(fchown):
    case SCMP_SYS(fsetxattr):
    case SCMP_SYS(fremovexattr):
    case SCMP_SYS(ioctl): return FdAttr(r, i(0), r.nr, valid);
    case SCMP_SYS(execve): return Exec(r, AT_FDCWD, a[0], valid);
    case SCMP_SYS(execveat): return Exec(r, i(0), a[1], valid);
    case SCMP_SYS(connect):
      return SocketName(r, i(0), a[1], a[2], false, valid, may_block);
    case SCMP_SYS(bind):
      return SocketName(r, i(0), a[1], a[2], true, valid, may_block);
    case SCMP_SYS(inotify_add_watch):
      return Watch(r, i(0), a[1], static_cast<uint32_t>(a[2]), valid);
    case SCMP_SYS(kill):
    case SCMP_SYS(tkill):
    case SCMP_SYS(tgkill):
    case SCMP_SYS(rt_sigqueueinfo):
    case SCMP_SYS(rt_tgsigqueueinfo):
    case SCMP_SYS(pidfd_send_signal):
    case SCMP_SYS(setpriority):
    case SCMP_SYS(ioprio_set):
    case SCMP_SYS(prlimit64):
    case SCMP_SYS(sched_setaffinity):
    case SCMP_SYS(sched_setscheduler):
    case SCMP_SYS(sched_setparam):
    case SCMP_SYS(sched_setattr):
      return ProcessTarget(r);
    case SCMP_SYS(umask): {
      umask_.OnUmask(r.tid, static_cast<mode_t>(a[0]));
      Reply cont;
      cont.continue_syscall = true;
      return cont;
    }
    default:
      if (r.nr == uapi::kNrFchmodat2) return Attr(r, i(0), a[1], i(3), r.nr, valid);
      // setxattrat, removexattrat, file_setattr: libc falls back on ENOSYS.
      return Reply::Errno(ENOSYS, "syscall not emulated");
  }
}

Reply Emulator::Open(const Request& req, int dirfd, uint64_t path_addr, uint64_t flags,
                     uint64_t mode, const std::function<bool()>& valid) {
  auto s = ReadToolString(req.tid, path_addr, PATH_MAX);
  if (!s) return Reply::Errno(s.error().err, "unreadable path");
  if (!valid()) return Reply::Errno(EACCES, "stale");
  const std::string& raw = s.value();
  if (flags & O_PATH) flags &= kOPathFlags;  // as open(2): no write bit counts
  Reply rep;
  rep.install_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
  if (policy::IsWritableDevice(raw) || (read_fence_ && policy::IsReadableDevice(raw) && (flags & O_ACCMODE) == O_RDONLY)) {
    Fd fd(::open(raw.c_str(), static_cast<int>(flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_CLOEXEC));
    if (!fd) return Reply::Errno(errno);
    rep.install = std::move(fd);
    return rep;
  }
  if (int n = policy::FdAliasNumber(raw.c_str()); n >= 0) {
    // The tool reopens a descriptor it already holds: hand it the same open
    // file (no new access), as long as the access mode asked for is covered
    // (policy/fd_alias.h). One held O_PATH grants nothing: the path rules.
    auto creds = ReadToolCreds(req.tid);
    if (!valid()) return Reply::Errno(EACCES, "stale");
    if (!creds) return Reply::Errno(ENOENT, "no such descriptor");
    auto fd = GetToolFd(creds->tgid, n);
    if (!fd) return Reply::Errno(ENOENT, "no such descriptor");
    switch (policy::JudgeHeldFd(::fcntl(fd->get(), F_GETFL), static_cast<int>(flags))) {
      case policy::HeldFd::kCovered:
        rep.install = std::move(fd.value());
        return rep;
      case policy::HeldFd::kNotHeld: return Reply::Errno(ENOENT, "no such descriptor");
      case policy::HeldFd::kNotCovered:
      case policy::HeldFd::kPathOnly: return Reply::Errno(EACCES, "descriptor not open for that");
    }
  }
  if (raw.empty()) return Reply::Errno(ENOENT);
  Path p;
  auto abs = Absolute(req.tid, dirfd, raw);
  if (!abs) return Reply::Errno(abs.error().err, "open " + raw + ": " + abs.error().op);
  p.abs = std::move(abs.value());
  p.slash = TrailingSlash(raw);
  constexpr uint64_t kWriteBits = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | kBareTmpfile;
  if (read_fence_ && !(flags & kWriteBits)) return OpenForRead(req, p.abs, flags);
  auto loc = roots_.Locate(p.abs, Change::kContent);
  if (!loc) return Reply::Errno(EACCES, "open for writing " + p.abs + ": " + loc.error().op);
  const std::string what = "open for writing " + p.abs;
  policy::FileRequest q;
  q.op = policy::FileOp::kOpenWrite;
  q.place = Place(*loc);
  q.tmpfile = flags & kBareTmpfile;
  const policy::Settings settings = DecideSettings();
  if (auto d = policy::Decide(q, settings); !d.allowed()) {
    return Reply::Errno(d.err, what + ": " + d.rule);
  }
  p.loc = *loc;
  const std::string rel = p.rel();  // with the tool's trailing slash, for the kernel to judge
  uint64_t perm = 0;
  std::optional<CreationUmask> creation;
  if (flags & (O_CREAT | kBareTmpfile)) {
    auto umask = umask_.Get(req.tid, valid);
    if (!umask) return Reply::Errno(EACCES, "stale");
    creation.emplace(umask.value());
    perm = creation->Mode(static_cast<mode_t>(mode));
  }
  // O_TRUNC is applied once the verified fd is installed (Reply). A
  // creation is tried exclusively first, so the supervisor knows whether it
  // made the file (BornInRun); an existing one is then opened as it is.
  const uint64_t open_flags = NoCtty(flags & ~static_cast<uint64_t>(O_TRUNC));
  const bool exclusive_first = (flags & O_CREAT) && !(flags & O_EXCL);
  // What may exist already is opened without waiting on a FIFO; what is
  // kept gets the tool's flags back below.
  bool probed = false;
  auto open_existing = [&](uint64_t f, uint64_t m) {
    return OpenWithoutWaiting(
        flags,
        [&](uint64_t extra) { return WriteRoots::OpenBeneath(*loc->root, rel, f | extra, m); },
        &probed);
  };
  bool created = false;
  Result<Fd> fd = SysError{ENOENT, "open"};
  for (int attempt = 0; attempt < 8; ++attempt) {
    probed = false;
    fd = exclusive_first ? WriteRoots::OpenBeneath(*loc->root, rel, open_flags | O_EXCL, perm)
                         : open_existing(open_flags, perm);
    if (fd) {
      created = (flags & O_CREAT) != 0;
      break;
    }
    if (!exclusive_first || fd.error().err != EEXIST) break;
    fd = open_existing(open_flags & ~static_cast<uint64_t>(O_CREAT), 0);
    if (fd || fd.error().err != ENOENT) break;  // ENOENT: removed in between, create again
  }
  if (!fd && probed && fd.error().err == ENXIO) {  // a FIFO with no reader, a socket
    q.entry.kind = policy::EntryKind::kSpecial;
    return Reply::Errno(EACCES, what + ": " + policy::Decide(q, settings).rule);
  }
  if (!fd) {
    return Reply::Errno(fd.error().err, fd.error().err == EACCES
                                            ? "open for writing " + p.abs + ": symlink on the way"
                                            : "");
  }
  if ((created || (flags & kBareTmpfile)) && !creation->FixMode(fd->get(), static_cast<mode_t>(mode))) {
    return Reply::Errno(errno);
  }
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return Reply::Errno(errno);
  q.entry = Facts(st, *loc);
  q.created = created;
  if (auto d = policy::Decide(q, settings); !d.allowed()) {
    return Reply::Errno(d.err, what + ": " + d.rule);
  }
  if (probed && !RestoreStatusFlags(fd->get(), open_flags)) return Reply::Errno(errno);
  if (!created) {
    Reply r = InstallReply(std::move(fd.value()), flags);
    // A file this call created is empty already: no truncate for it.
    r.truncate_installed = (flags & O_TRUNC) && S_ISREG(st.st_mode);
    return r;
  }
  Born(st);
  if (loc->root->own_entries_only) made_shared_ = true;
  Reply installed = InstallReply(std::move(fd.value()), flags);
  // The kernel takes the fd before it creates anything: a file made for an
  // fd that cannot be installed is removed again, if it is still ours.
  installed.undo = [loc = *loc, dev = st.st_dev, ino = st.st_ino] {
    auto parent = WriteRoots::OpenParent(loc);
    struct stat now;
    if (parent && ::fstatat(parent->get(), loc.name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
        now.st_dev == dev && now.st_ino == ino) {
      (void)::unlinkat(parent->get(), loc.name.c_str(), 0);
    }
  };
  return installed;
}

bool Emulator::Protected(const Located& loc) const {
  if (!loc.root->workspace || !opts_.is_protected || loc.rel.empty()) return false;
  if (!opts_.is_protected(loc.rel)) return false;
  // A repository created in this run is the tool's own: git init and
  // commit must write its config. Its hooks that would run stay protected.
  const std::string& rel = loc.rel;
  size_t pos = rel == ".git" || rel.rfind(".git/", 0) == 0 ? 0 : rel.find("/.git");
  if (pos == std::string::npos) return true;
  if (pos != 0) pos += 1;
  std::string git_rel = rel.substr(0, pos + 4);
  if (rel.size() > git_rel.size() && rel[git_rel.size()] != '/') return true;  // ".gitx"
  auto git = WriteRoots::OpenBeneath(*loc.root, git_rel, O_PATH | O_NOFOLLOW, 0);
  if (!git) return !(git.error().err == ENOENT && rel == git_rel);  // a new repository
  struct statx stx {};
  if (::statx(git->get(), "", AT_EMPTY_PATH, STATX_BTIME, &stx) != 0 ||
      !(stx.stx_mask & STATX_BTIME)) {
    return true;
  }
  int64_t born = static_cast<int64_t>(stx.stx_btime.tv_sec) * 1000000000 + stx.stx_btime.tv_nsec;
  if (born < run_start_ns_) return true;
  // Its hooks, and those of the submodules it holds (.git/modules/NAME/hooks).
  std::string_view tail = std::string_view(rel).substr(git_rel.size());
  bool hook = tail.starts_with("/hooks/") ||
              (tail.starts_with("/modules/") && tail.find("/hooks/") != std::string_view::npos);
  return hook && !rel.ends_with(".sample");
}

// The run's own: created by this supervisor, or born strictly after the
// run began. Birth times come from the kernel's coarse clock (on this kind
// of VM up to ~8 ms behind CLOCK_REALTIME) or, on multigrain filesystems,
// from the fine one, so a file born early in the run may carry a time before
// run_start_ns_; what the supervisor created itself is known without it. Left
// to the time: what the kernel creates alone (write-opens under links:
// kernel), which in the run's first milliseconds may count as the user's,
// the safe side. No birth time (-1): the user's.
bool Emulator::BornInRun(const EntryStat& e) {
  if (laundered_.Contains(e.st.st_dev, e.st.st_ino)) return false;
  return created_.Contains(e.st.st_dev, e.st.st_ino) || e.born_ns > run_start_ns_;
}

void Emulator::Born(const struct stat& st) {
  laundered_.Erase(st.st_dev, st.st_ino);
  created_.Insert(st.st_dev, st.st_ino);
}

// `st` is the entry as it was before its name went: a file with no other
// link, or a directory, no longer exists (an open fd keeps the inode, and
// its number, allocated until it is closed; nothing can name it meanwhile).
void Emulator::Gone(const struct stat& st) {
  if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) return;
  laundered_.Erase(st.st_dev, st.st_ino);
  created_.Erase(st.st_dev, st.st_ino);
}

Reply Emulator::Unlink(const Request& req, int dirfd, uint64_t path, int flags,
                       const std::function<bool()>& valid, bool may_block) {
  if (flags & ~AT_REMOVEDIR) return Reply::Errno(EINVAL);
  auto p = ResolvePath(req, dirfd, path, false);
  if (!valid()) return Reply::Errno(EACCES, "stale");
  if (!p) return Reply::Errno(p.error().err, "delete: " + Describe(p.error()));
  const std::string what = "delete " + p->abs;
  policy::FileRequest q;
  q.op = policy::FileOp::kDelete;
  q.want_dir = flags & AT_REMOVEDIR;
  q.place = Place(p->loc);
  const policy::Settings settings = DecideSettings();
  // What the place alone refuses (a root has no parent to look in).
  if (auto d = policy::Decide(q, settings); d.verdict == policy::Verdict::kRefuse) {
    return Reply::Errno(d.err, what + ": " + d.rule);
  }
  auto parent = WriteRoots::OpenParent(p->loc);
  if (!parent) return Reply::Errno(parent.error().err);
  EntryStat entry;
  if (!StatEntry(parent->get(), p->name(), entry)) return Reply::Errno(errno);
  const struct stat& st = entry.st;
  q.entry = Facts(st, p->loc);
  q.entry.born_in_run = BornInRun(entry);
  const policy::Decision d = policy::Decide(q, settings);
  switch (d.verdict) {
    case policy::Verdict::kRefuse: return Reply::Errno(d.err, what + ": " + d.rule);
    case policy::Verdict::kAsk: {
      std::string why = what + ": the file existed before the run and needs approval";
      if (!may_block) {
        Reply later;
        later.defer = true;
        return later;
      }
      if (opts_.delete_gate(req, parent->get(), p->loc.name, p->loc.rel, valid, why)) {
        Gone(st);
        return Reply{};
      }
      return Reply::Errno(EACCES, why);
    }
    case policy::Verdict::kAllow: break;
  }
  if (::unlinkat(parent->get(), p->name().c_str(), flags) != 0) return Reply::Errno(errno);
  Gone(st);
  return Reply{};
}

Reply Emulator::Rename(const Request& req, int olddir, uint64_t oldpath, int newdir,
                       uint64_t newpath, unsigned flags, const std::function<bool()>& valid) {
  if (flags & RENAME_WHITEOUT) return Reply::Errno(EPERM, "rename whiteout");
  auto from = ResolvePath(req, olddir, oldpath, false);
  auto to = ResolvePath(req, newdir, newpath, false);
  if (!valid()) return Reply::Errno(EACCES, "stale");
  if (!from) return Reply::Errno(from.error().err, "rename: " + Describe(from.error()));
  if (!to) return Reply::Errno(to.error().err, "rename: " + Describe(to.error()));
  const std::string what = "rename " + from->abs + " -> " + to->abs;
  policy::FileRequest q;
  q.op = (flags & RENAME_EXCHANGE) ? policy::FileOp::kExchange : policy::FileOp::kRename;
  q.place = Place(from->loc, true);
  q.other_place = Place(to->loc, true);
  q.same_root = from->loc.root == to->loc.root;
  const policy::Settings settings = DecideSettings();
  if (auto d = policy::Decide(q, settings); d.verdict == policy::Verdict::kRefuse) {
    return Reply::Errno(d.err, what + ": " + d.rule);
  }
  auto pf = WriteRoots::OpenParent(from->loc);
  if (!pf) return Reply::Errno(pf.error().err);
  // Beneath a "**" pattern's lead (.git/modules/NAME, NAME any depth) git
  // renames its own files: there only a directory is refused, so its type
  // is a fact. It cannot change before the rename below: every call that
  // makes a directory or a name in the workspace is answered on this
  // thread, one at a time (a deferred delete only removes).
  struct stat src {};
  bool src_known = false;
  auto stat_source = [&] {
    src_known = ::fstatat(pf->get(), from->name().c_str(), &src, AT_SYMLINK_NOFOLLOW) == 0;
    return src_known;
  };
  if (q.place.leads_to_protected_any_depth || q.other_place.leads_to_protected_any_depth) {
    if (stat_source()) q.entry = Facts(src, from->loc);
  }
  // Within one directory (the common rename) its fd serves both ends.
  Fd pt_own;
  int pt = pf->get();
  if (to->loc.parent_rel != from->loc.parent_rel) {
    auto o = WriteRoots::OpenParent(to->loc);
    if (!o) return Reply::Errno(o.error().err);
    pt_own = std::move(o.value());
    pt = pt_own.get();
  }
  EntryStat dst;
  const bool dst_exists = StatEntry(pt, to->name(), dst);
  q.other.kind = policy::EntryKind::kAbsent;
  if (dst_exists) {
    q.other = Facts(dst.st, to->loc);
    q.other.born_in_run = BornInRun(dst);
  }
  // The source's inode is needed against pins, to be marked when it
  // replaces a file of the user's and to tell a replaced inode from itself
  // (renaming a name onto itself removes nothing): one syscall fewer for a
  // plain rename.
  const bool replaces = dst_exists && !(flags & RENAME_EXCHANGE);
  if (!src_known && (roots_.HasPins() || replaces || from->loc.root->own_entries_only)) {
    if (!stat_source()) return Reply::Errno(errno);
    q.entry = Facts(src, from->loc);
  }
  // The kernel's own answers first, where they do not depend on the rules:
  // a taken name under RENAME_NOREPLACE, a file over a directory.
  if (dst_exists && (flags & RENAME_NOREPLACE)) return Reply::Errno(EEXIST);
  if (replaces && S_ISDIR(dst.st.st_mode) && src_known && !S_ISDIR(src.st_mode)) {
    return Reply::Errno(EISDIR);
  }
  const policy::Decision d = policy::Decide(q, settings);
  if (d.verdict != policy::Verdict::kAllow) return Reply::Errno(d.err, what + ": " + d.rule);
  if (::renameat2(pf->get(), from->name().c_str(), pt, to->name().c_str(), flags) != 0) {
    return Reply::Errno(errno);
  }
  // The moved inode now stands where the user's file was: deleting it is
  // deleting the user's file (no laundering through an overwrite).
  if (d.launders) laundered_.Insert(src.st_dev, src.st_ino);
  if (replaces && (src.st_dev != dst.st.st_dev || src.st_ino != dst.st.st_ino)) Gone(dst.st);
  return Reply{};
}

Reply Emulator::Create(const Request& req, int dirfd, uint64_t path, int kind, uint64_t arg,
                       const std::function<bool()>& valid) {
  std::string target;
  if (kind == S_IFLNK) {
    auto t = ReadToolString(req.tid, arg, PATH_MAX);
    if (!t) return Reply::Errno(t.error().err);
    target = std::move(t.value());
  }
  auto name = ReadToolString(req.tid, path, PATH_MAX);
  if (!name) return Reply::Errno(name.error().err);
  auto p = Resolve(req, dirfd, name.value(), false);
  if (!valid()) return Reply::Errno(EACCES, "stale");
  // A name that exists is EEXIST before anything else, as from the kernel
  // (which looks the name up before it asks Landlock): `mkdir -p` and
  // cmake make every ancestor, /tmp and the workspace's parents included.
  // Only where the tool's own stat would find it (ToolSeesEntry).
  if (!p) {
    if (p.error().err == EACCES) {
      auto abs = Absolute(req.tid, dirfd, name.value());  // Resolve's, unlocated
      if (abs && ToolSeesEntry(abs.value())) return Reply::Errno(EEXIST);
    }
    return Reply::Errno(p.error().err, "create: " + Describe(p.error()));
  }
  policy::FileRequest q;
  q.op = policy::FileOp::kCreate;
  q.entry.kind = policy::EntryKind::kAbsent;
  q.place = Place(p->loc);
  const mode_t type = static_cast<mode_t>(arg) & S_IFMT;
  q.create = kind == S_IFLNK  ? policy::EntryKind::kSymlink
             : kind == S_IFDIR ? policy::EntryKind::kDirectory
             : type == 0 || type == S_IFREG ? policy::EntryKind::kRegular
                                            : policy::EntryKind::kSpecial;
  q.tool_sees_name = q.place.protected_path && ToolSeesEntry(p->abs);
  if (auto d = policy::Decide(q, DecideSettings()); !d.allowed()) {
    return Reply::Errno(d.err, "create " + p->abs + ": " + d.rule);
  }
  auto parent = WriteRoots::OpenParent(p->loc);
  if (!parent) return Reply::Errno(parent.error().err);
  auto tool_umask = umask_.Get(req.tid, valid);
  if (!tool_umask) return Reply::Errno(EACCES, "stale");
  const CreationUmask creation(tool_umask.value());
  mode_t mode = static_cast<mode_t>(arg);
  int rc;
  if (kind == S_IFLNK) {
    rc = ::symlinkat(target.c_str(), parent->get(), p->name().c_str());
  } else if (kind == S_IFDIR) {
    rc = ::mkdirat(parent->get(), p->name().c_str(), creation.Mode(mode));
  } else {
    rc = ::mknodat(parent->get(), p->name().c_str(), S_IFREG | creation.Mode(mode), 0);
  }
  if (rc != 0) return Reply::Errno(errno);
  if (kind != S_IFLNK && !creation.exact()) {
    // Only with no umask of its own (a container): the entry just made,
    // put right if cordon's umask took what the tool's did not.
    auto made = WriteRoots::OpenBeneath(*p->loc.root, p->loc.rel, O_PATH | O_NOFOLLOW, 0);
    if (made && !creation.FixMode(made->get(), mode)) return Reply::Errno(errno);
  }
  struct stat st;
  if (::fstatat(parent->get(), p->loc.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) Born(st);
  if (p->loc.root->own_entries_only) made_shared_ = true;
  return Reply{};
}

Reply Emulator::Link(const Request& req, int olddir, uint64_t oldpath, int newdir,
                     uint64_t newpath, int flags, const std::function<bool()>& valid) {
  if (flags & (AT_SYMLINK_FOLLOW | AT_EMPTY_PATH)) return Reply::Errno(EACCES, "link following links");
  if (flags != 0) return Reply::Errno(EINVAL);
  auto from = ResolvePath(req, olddir, oldpath, false);
  auto to = ResolvePath(req, newdir, newpath, false);
  if (!valid()) return Reply::Errno(EACCES, "stale");
  if (!from) return Reply::Errno(from.error().err, "link: " + Describe(from.error()));
  if (!to) return Reply::Errno(to.error().err, "link: " + Describe(to.error()));
  const std::string what = "link " + from->abs + " -> " + to->abs;
  policy::FileRequest q;
  q.op = policy::FileOp::kLink;
  q.place = Place(from->loc);
  q.other_place = Place(to->loc);
  q.same_root = from->loc.root == to->loc.root;
  const policy::Settings settings = DecideSettings();
  if (auto d = policy::Decide(q, settings); d.verdict == policy::Verdict::kRefuse) {
    return Reply::Errno(d.err, what + ": " + d.rule);
  }
  auto pf = WriteRoots::OpenParent(from->loc);
  if (!pf) return Reply::Errno(pf.error().err);
  auto pt = WriteRoots::OpenParent(to->loc);
  if (!pt) return Reply::Errno(pt.error().err);
  struct stat src;
  q.entry.kind = policy::EntryKind::kAbsent;
  if (::fstatat(pf->get(), from->name().c_str(), &src, AT_SYMLINK_NOFOLLOW) == 0) {
    q.entry = Facts(src, from->loc);
  }
  if (auto d = policy::Decide(q, settings); !d.allowed()) {
    return Reply::Errno(d.err, what + ": " + d.rule);
  }
  if (::linkat(pf->get(), from->name().c_str(), pt->get(), to->name().c_str(), 0) != 0) {
    return Reply::Errno(errno);
  }
  return Reply{};
}


}  // namespace cordon::supervisor
