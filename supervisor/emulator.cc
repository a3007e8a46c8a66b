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
#include "policy/git_worktree.h"
#include "policy/protected_paths.h"
#include "policy/refusal_hint.h"
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

Reply Reply::PathRefused(const std::string& what, const SysError& e) {
  return PathRefused(what, e, e.detail);
}

Reply Reply::PathRefused(const std::string& what, const SysError& e, std::string_view hint_path) {
  return Errno(e.err, what + Describe(e), policy::RefusalHint(policy::FromRule(e.op), hint_path));
}

Reply Reply::NameRefused(const std::string& what, const SysError& e) {
  return Errno(e.err, what + Describe(e), policy::NameChangeHint(policy::FromRule(e.op), e.detail));
}

Reply Reply::Refused(const policy::Decision& d, const std::string& what, std::string_view path) {
  return Errno(d.err, what + ": " + d.rule, policy::RefusalHint(policy::FromRule(d.rule), path));
}

// lstat and birth time in one statx (one syscall fewer per delete); an
// empty name: `dirfd` itself.
bool Emulator::StatEntry(int dirfd, const std::string& name, EntryStat& e) {
  struct statx stx {};
  const int at = AT_SYMLINK_NOFOLLOW | (name.empty() ? AT_EMPTY_PATH : 0);
  if (::statx(dirfd, name.c_str(), at, STATX_BASIC_STATS | STATX_BTIME, &stx) != 0) {
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
  e.st.st_blocks = static_cast<blkcnt_t>(stx.stx_blocks);
  e.st.st_atim = {stx.stx_atime.tv_sec, stx.stx_atime.tv_nsec};
  e.st.st_mtim = {stx.stx_mtime.tv_sec, stx.stx_mtime.tv_nsec};
  e.born_ns = (stx.stx_mask & STATX_BTIME) ? static_cast<int64_t>(stx.stx_btime.tv_sec) * 1000000000 +
                                                 stx.stx_btime.tv_nsec
                                           : -1;
  return true;
}

namespace {

// The rules the request this thread decides was given (Emulator::Handle),
// held for the rest of the request that Emulator::Later hands on.
struct RulesScope {
  const Emulator* emulator = nullptr;
  std::shared_ptr<const Rules> rules;
};
thread_local RulesScope t_rules;

// Sets the thread's rules for its life and puts the previous ones back.
class ScopedRules {
 public:
  ScopedRules(const Emulator* e, std::shared_ptr<const Rules> rules) : saved_(std::move(t_rules)) {
    t_rules = {e, std::move(rules)};
  }
  ~ScopedRules() { t_rules = std::move(saved_); }
  ScopedRules(const ScopedRules&) = delete;
  ScopedRules& operator=(const ScopedRules&) = delete;

 private:
  RulesScope saved_;
};

}  // namespace

Emulator::Emulator(std::shared_ptr<LiveRules> rules, int64_t run_start_ns, EmulatorOptions opts,
                   std::unique_ptr<ReadFence> read_fence)
    : live_(std::move(rules)),
      read_fence_(std::move(read_fence)),
      run_start_ns_(run_start_ns),
      opts_(std::move(opts)) {
  if (!opts_.gates) opts_.gates = std::make_shared<DenyGates>();
}

Emulator::~Emulator() {
  RemoveFifosLeft();
  CheckGitFilesLeft();
  if (!made_shared_.load()) return;
  for (const WriteRoot& root : rules().roots.roots()) {
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

Reply Emulator::Exec(const Request& req, int dirfd, uint64_t path,
                     const std::function<bool()>& valid) {
  Reply cont;
  cont.continue_syscall = true;
  if (!read_fence_ && rules().pins.empty() && !gates().CanAsk(Ask::kExec)) {
    // Landlock's EXECUTE rights are the fence. Noting the exec (attribution
    // only) changes no answer: whatever it cannot read or resolve goes on.
    if (gates().SeesExecs()) {
      auto s = ReadToolString(req.tid, path, PATH_MAX);
      auto abs = s && valid() ? Absolute(req.tid, dirfd, s.value()) : Result<std::string>(SysError{});
      if (abs) NoteExec(req.tid, abs.value(), ForTool(abs.value(), req.tid));
    }
    return cont;
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
  if (!rules().pins.empty()) {
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
    ExecDecision d = DecideExec(rules().pins, st, fd.get());
    if (!d.allow) return Reply::Errno(d.err ? d.err : EACCES, "execute " + abs + ": " + d.reason);
    spdlog::debug("execute {}: {}", abs, d.reason);
  }
  if (gates().CanAsk(Ask::kExec)) {
    if (Status g = gates().AdmitExec(); !g) {
      return Reply::Errno(EACCES, "execute " + abs + ": " + Describe(g.error()));
    }
  }
  if (gates().SeesExecs()) NoteExec(req.tid, abs, target);
  return cont;
}

void Emulator::NoteExec(pid_t tid, const std::string& abs, const std::string& target) {
  // A name that is no executable regular file makes the exec fail (execvp
  // tries each PATH entry): no image to account for. Other late failures
  // (ENOEXEC, a Landlock EXECUTE refusal) still count as an image.
  // As the tool (this thread's permissions): what it cannot reach it cannot run.
  struct stat st;
  if (::stat(target.c_str(), &st) != 0) return;
  if (!S_ISREG(st.st_mode) || (st.st_mode & 0111) == 0) return;
  auto creds = ReadToolCreds(tid);
  if (!creds) return;  // gone
  gates().ExecSeen(creds->tgid, abs);
}

Result<Emulator::Path> Emulator::ResolvePath(const Request& req, int dirfd, uint64_t addr,
                                             bool empty_ok, Change change, Named* named) {
  auto s = ReadToolString(req.tid, addr, PATH_MAX);
  if (!s) return s.error().err == ENAMETOOLONG ? SysError{ENAMETOOLONG, "path"} : s.error();
  return Resolve(req, dirfd, std::move(s.value()), empty_ok, change, named);
}

Result<Emulator::Path> Emulator::Resolve(const Request& req, int dirfd, std::string path,
                                         bool empty_ok, Change change, Named* named) {
  if (path.empty() && !empty_ok) return SysError{ENOENT, "empty path"};
  Path p;
  p.slash = TrailingSlash(path);
  auto abs = ToolAbsolute(req.tid, dirfd, path);
  if (!abs) return abs.error();
  p.abs = std::move(abs.value());
  if (named != nullptr) *named = {path, p.abs};
  auto loc = rules().roots.Locate(p.abs, change);
  if (!loc) return loc.error();
  p.loc = std::move(loc.value());
  return p;
}

const Rules& Emulator::rules() const {
  if (t_rules.emulator == this) return *t_rules.rules;
  // Kept alive by live_ until the run ends (LiveRules::Install).
  return *live_->Current();
}

Reply Emulator::Guarded(int nr) {
  // Said as the other refusals are; a path call gets EACCES, a process or
  // socket call EPERM (DESIGN.md, "Exit status").
  const bool path_call = nr != SCMP_SYS(kill) && nr != SCMP_SYS(tkill) && nr != SCMP_SYS(tgkill) &&
                         nr != SCMP_SYS(pidfd_send_signal) && nr != SCMP_SYS(prctl) &&
                         nr != SCMP_SYS(listen) && nr != SCMP_SYS(socket);
  return Reply::Errno(path_call ? EACCES : EPERM,
                      "policy reload in progress: every decision refuses until it ends",
                      "try again once `cordon policy reload` has finished");
}

Reply Emulator::Later(std::function<Reply()> rest, Reply::Worker on) const {
  Reply r;
  r.later_on = on;
  r.later = [this, rules = t_rules.rules, rest = std::move(rest)]() -> Reply {
    ScopedRules scope(this, rules);
    return rest();
  };
  return r;
}

Reply Emulator::Handle(const Request& r, const std::function<bool()>& valid) {
  // One rule set for the whole request: taken once, here.
  std::shared_ptr<const Rules> snapshot = live_->Snapshot();
  // umask decides nothing (it only drops the cached mask): never refused.
  if (!snapshot && r.nr != SCMP_SYS(umask)) return Guarded(r.nr);
  ScopedRules scope(this, snapshot ? std::move(snapshot) : live_->Current());
  ToolPermissions as_tool;  // free on the notify loop's threads, which hold one
  if (!as_tool.lowered()) return Reply::Errno(EACCES, "cannot lower capabilities");
  umask_.Seen(r.tid);
  const uint64_t* a = r.args;
  auto i = [&](int k) { return static_cast<int>(a[k]); };
  switch (r.nr) {
    case SCMP_SYS(open): return Open(r, AT_FDCWD, a[0], a[1], a[2], valid);
    case SCMP_SYS(openat): return Open(r, i(0), a[1], a[2], a[3], valid);
    case SCMP_SYS(creat): return Open(r, AT_FDCWD, a[0], O_CREAT | O_WRONLY | O_TRUNC, a[1], valid);
    case SCMP_SYS(unlink): return Unlink(r, AT_FDCWD, a[0], 0, valid);
    case SCMP_SYS(rmdir): return Unlink(r, AT_FDCWD, a[0], AT_REMOVEDIR, valid);
    case SCMP_SYS(unlinkat): return Unlink(r, i(0), a[1], i(2), valid);
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
      return SocketName(r, i(0), a[1], a[2], false, valid);
    case SCMP_SYS(bind):
      return SocketName(r, i(0), a[1], a[2], true, valid);
    case SCMP_SYS(listen): return Listen(r, i(0), i(1));
    case SCMP_SYS(socket):
      return DatagramSocket(r);
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
    case SCMP_SYS(prctl): return Undumpable(r);
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

bool Emulator::Protected(const Located& loc) const { return RepoPlace(loc).protected_path; }

namespace {

// The git directory of a submodule that `rel` lies in, beneath `git_rel`
// (".git"): `.git/modules/NAME` up to the first of the names the protected
// patterns give it (hooks, info, config, ...) after at least one segment of
// NAME, which may hold slashes and nest further modules. Empty for none.
std::string ModuleDir(const std::string& rel, const std::string& git_rel) {
  static constexpr std::string_view kLeaves[] = {"hooks", "info", "config", "config.worktree",
                                                 "commondir"};
  const std::string prefix = git_rel + "/modules/";
  if (rel.rfind(prefix, 0) != 0) return {};
  size_t start = prefix.size();
  bool first = true;
  while (start < rel.size()) {
    size_t end = rel.find('/', start);
    if (end == std::string::npos) end = rel.size();
    std::string_view seg(rel.data() + start, end - start);
    if (!first && std::find(std::begin(kLeaves), std::end(kLeaves), seg) != std::end(kLeaves)) {
      return rel.substr(0, start - 1);
    }
    first = false;
    start = end + 1;
  }
  return {};
}

}  // namespace

Emulator::RepoFacts Emulator::RepoPlace(const Located& loc) const {
  if (!loc.root->workspace || rules().protected_patterns.empty() || loc.rel.empty()) return {};
  if (!policy::MatchesProtected(rules().protected_patterns, loc.rel)) return {};
  constexpr RepoFacts kProtected{true, false, false};
  const std::string& rel = loc.rel;
  // Made by this supervisor (known without a clock), or born after the run
  // began: a .git made in the run's first milliseconds may carry a coarse
  // birth time before run_start_ns_ (BornInRun). nullopt: nothing there.
  auto made_in_run = [&](const std::string& dir) -> std::optional<bool> {
    auto fd = WriteRoots::OpenBeneath(*loc.root, dir, O_PATH | O_NOFOLLOW, 0);
    if (!fd) return fd.error().err == ENOENT ? std::nullopt : std::optional<bool>(false);
    struct statx stx {};
    if (::statx(fd->get(), "", AT_EMPTY_PATH, STATX_BTIME | STATX_INO, &stx) != 0) return false;
    const dev_t dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
    if (created_.Contains(dev, stx.stx_ino) && !laundered_.Contains(dev, stx.stx_ino)) return true;
    int64_t born = static_cast<int64_t>(stx.stx_btime.tv_sec) * 1000000000 + stx.stx_btime.tv_nsec;
    return (stx.stx_mask & STATX_BTIME) && born >= run_start_ns_;
  };
  // .gitmodules (git submodule add): the user's stays protected; where
  // there is none, or one this run made, it is the run's own.
  if (policy::ProtectedOnlyOnceUsers(rules().protected_patterns, rel)) {
    return made_in_run(rel) == std::optional<bool>(false) ? kProtected : RepoFacts{};
  }
  // A repository created in this run is the tool's own: git init and
  // commit must write its config. Its hooks that would run stay protected.
  size_t pos = rel == ".git" || rel.rfind(".git/", 0) == 0 ? 0 : rel.find("/.git");
  if (pos == std::string::npos) return kProtected;
  if (pos != 0) pos += 1;
  std::string git_rel = rel.substr(0, pos + 4);
  if (rel.size() > git_rel.size() && rel[git_rel.size()] != '/') return kProtected;  // ".gitx"
  std::optional<bool> git_made = made_in_run(git_rel);
  if (!git_made) return rel == git_rel ? RepoFacts{} : kProtected;  // a new repository
  if (!*git_made) {
    // A repository the user had. git rewrites its .git/config to register
    // a submodule (git submodule init, update --init): guarded by content
    // against the user's (policy/git_config_keys.h). A submodule's git
    // directory the run made (.git/modules/NAME, cloned into by
    // update --init) is the tool's own, as a new repository is.
    if (rel == git_rel + "/config") return {false, true, true};
    // Its gitfile (a worktree's, a submodule's) and a worktree's commondir
    // may go (git worktree remove): nothing is made or written there.
    constexpr RepoFacts kRemovable{true, false, false, false, true};
    if (rel == git_rel) return kRemovable;
    // So is a worktree's admin dir the run made (git worktree add:
    // .git/worktrees/NAME), a submodule's included.
    std::string module = policy::WorktreeAdminDir(rel);
    const bool worktree = !module.empty();
    if (module.empty()) module = ModuleDir(rel, git_rel);
    if (module.empty()) return kProtected;
    if (made_in_run(module) != std::optional<bool>(true)) {
      return worktree && rel.ends_with("/commondir") ? kRemovable : kProtected;
    }
    git_rel = std::move(module);
  }
  // Its hooks, and those of the submodules and worktrees it holds
  // (.git/modules/NAME/hooks; .git/worktrees/NAME/hooks, obeyed once the
  // admin dir's commondir is gone).
  std::string_view tail = std::string_view(rel).substr(git_rel.size());
  bool hook = tail.starts_with("/hooks/") ||
              ((tail.starts_with("/modules/") || tail.starts_with("/worktrees/")) &&
               tail.find("/hooks/") != std::string_view::npos);
  if (hook && !rel.ends_with(".sample")) return kProtected;
  // commondir names where git reads config from: pointed at a directory of
  // the tool's, it would bring a config no check saw. Its config: guarded
  // (git's lock-file rename of checked content only).
  // A new worktree's (the admin dir the run made) is made by the
  // supervisor with the content git writes, which names this repository.
  std::string_view base = std::string_view(rel).substr(rel.rfind('/') + 1);
  if (base == "commondir") {
    const std::string admin = policy::WorktreeAdminDir(rel);
    if (!admin.empty() && made_in_run(admin) == std::optional<bool>(true)) {
      return {true, false, false, true};
    }
    return kProtected;
  }
  return {false, base == "config" || base == "config.worktree", false};
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

}  // namespace cordon::supervisor
