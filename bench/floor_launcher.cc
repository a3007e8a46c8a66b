// The floor of a cordon launch: the least any launcher that enforces what
// cordon enforces must do, with nothing else, so that `cordon run`'s launch
// time can be set beside it in one invocation of the kit
// (../shared/bench/run.sh):
//
//   floor_launcher [--scan] [--walkers N] WORKSPACE -- CMD [ARGS...]
//
// It builds a Landlock ruleset (the system's read-only roots, the
// workspace read-write, TCP refused), forks, and in the child applies it,
// installs a seccomp filter with a user-notification listener (a few
// mutating calls notified, a few kernel interfaces refused), hands the
// listener to the parent and execs CMD; the parent answers every
// notification with "continue" on a thread and waits.
//
// --scan adds what issue 27 item 8 asks of every launch: a stat of each
// directory of the workspace, checked against a cache of their times kept
// between launches (a directory's mtime and ctime are the only sign that
// a name was added in it), with the directories that hold subdirectories
// opened to stat their children beneath them. The cache is a flat binary
// file read in one call; nothing is parsed.
#include <dirent.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "supervisor/fd_passing.h"
#include "supervisor/uapi.h"  // the kernel ABI's numbers, as Debian 12's headers lack them

namespace {

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "floor_launcher: %s: %s\n", what, std::strerror(errno));
  std::exit(125);
}

// One directory of the workspace, in preorder; the root is record 0.
struct Dir {
  std::uint32_t parent = 0;
  std::uint32_t name_off = 0, name_len = 0;  // into the names blob
  bool has_children = false;
  std::int64_t mtime_s = 0, mtime_ns = 0, ctime_s = 0, ctime_ns = 0;
  std::uint64_t ino = 0;
};

struct Cache {
  std::vector<Dir> dirs;
  std::string names;
};

bool Same(const Dir& d, const struct stat& st) {
  return d.ino == st.st_ino && d.mtime_s == st.st_mtim.tv_sec && d.mtime_ns == st.st_mtim.tv_nsec &&
         d.ctime_s == st.st_ctim.tv_sec && d.ctime_ns == st.st_ctim.tv_nsec;
}

void SetTimes(Dir& d, const struct stat& st) {
  d.ino = st.st_ino;
  d.mtime_s = st.st_mtim.tv_sec;
  d.mtime_ns = st.st_mtim.tv_nsec;
  d.ctime_s = st.st_ctim.tv_sec;
  d.ctime_ns = st.st_ctim.tv_nsec;
}

// A full listing of the tree, in preorder (the first launch, or a change).
void ListTree(int fd, std::uint32_t self, Cache& c) {
  struct stat st;
  if (::fstat(fd, &st) != 0) Die("fstat");
  SetTimes(c.dirs[self], st);
  DIR* d = ::fdopendir(::dup(fd));
  if (d == nullptr) Die("fdopendir");
  std::vector<std::string> subs;
  while (dirent* e = ::readdir(d)) {
    if (e->d_type != DT_DIR || std::strcmp(e->d_name, ".") == 0 ||
        std::strcmp(e->d_name, "..") == 0)
      continue;
    subs.emplace_back(e->d_name);
  }
  ::closedir(d);
  c.dirs[self].has_children = !subs.empty();
  for (const std::string& s : subs) {
    int sub = ::openat(fd, s.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) continue;
    Dir rec;
    rec.parent = self;
    rec.name_off = static_cast<std::uint32_t>(c.names.size());
    rec.name_len = static_cast<std::uint32_t>(s.size());
    c.names += s;
    c.dirs.push_back(rec);
    ListTree(sub, static_cast<std::uint32_t>(c.dirs.size() - 1), c);
    ::close(sub);
  }
}

std::string CachePath(const std::string& ws) {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/cordon-floor-scan-" +
         std::to_string(std::hash<std::string>{}(ws));
}

bool ReadCache(const std::string& path, Cache& c) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  std::string buf;
  if (::fstat(fd, &st) == 0) {
    buf.resize(static_cast<std::size_t>(st.st_size));
    if (::read(fd, buf.data(), buf.size()) != static_cast<ssize_t>(buf.size())) buf.clear();
  }
  ::close(fd);
  std::uint64_t n = 0;
  if (buf.size() < sizeof n) return false;
  std::memcpy(&n, buf.data(), sizeof n);
  const std::size_t dirs_bytes = n * sizeof(Dir);
  if (buf.size() < sizeof n + dirs_bytes) return false;
  c.dirs.resize(n);
  std::memcpy(c.dirs.data(), buf.data() + sizeof n, dirs_bytes);
  c.names.assign(buf, sizeof n + dirs_bytes);
  return true;
}

void WriteCache(const std::string& path, const Cache& c) {
  std::string buf;
  const std::uint64_t n = c.dirs.size();
  buf.append(reinterpret_cast<const char*>(&n), sizeof n);
  buf.append(reinterpret_cast<const char*>(c.dirs.data()), n * sizeof(Dir));
  buf += c.names;
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  if (::write(fd, buf.data(), buf.size()) == static_cast<ssize_t>(buf.size())) {
    ::rename(tmp.c_str(), path.c_str());
  }
  ::close(fd);
}

// Stats records [first, last) of the preorder list; `fds` holds each
// opened directory's descriptor (a parent comes before its children).
// False at the first directory that changed.
bool CheckRange(const Cache& c, std::vector<int>& fds, std::size_t first, std::size_t last) {
  for (std::size_t i = first; i < last; ++i) {
    const Dir& d = c.dirs[i];
    char name[256];
    if (d.name_len >= sizeof name) return false;
    std::memcpy(name, c.names.data() + d.name_off, d.name_len);
    name[d.name_len] = '\0';
    const int parent = fds[d.parent];
    struct stat st;
    if (d.has_children) {
      fds[i] = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fds[i] < 0 || ::fstat(fds[i], &st) != 0) return false;
    } else if (::fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return false;
    }
    if (!Same(d, st)) return false;
  }
  return true;
}

// The scan: the cache's directories checked on `walkers` threads, each a
// run of whole subtrees of the root; listed again when one changed.
void Scan(const std::string& ws, int walkers) {
  int root = ::open(ws.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) Die("open workspace");
  const std::string path = CachePath(ws);
  Cache c;
  bool ok = ReadCache(path, c) && !c.dirs.empty();
  if (ok) {
    struct stat st;
    ok = ::fstat(root, &st) == 0 && Same(c.dirs[0], st);
  }
  if (ok) {
    std::vector<int> fds(c.dirs.size(), -1);
    fds[0] = root;
    // Split the list into whole subtrees at the shallowest depth that gives
    // each walker several: in preorder a subtree is a run of records. The
    // directories above that depth are checked first, by this thread.
    std::vector<std::uint32_t> depth(c.dirs.size(), 0);
    for (std::size_t i = 1; i < c.dirs.size(); ++i) depth[i] = depth[c.dirs[i].parent] + 1;
    std::uint32_t cut = 1;
    for (;; ++cut) {
      std::size_t n = 0;
      for (std::uint32_t d : depth) n += d == cut;
      if (n == 0 || n >= static_cast<std::size_t>(walkers) * 4) break;
    }
    std::vector<std::size_t> tops;
    bool above_ok = true;
    for (std::size_t i = 1; i < c.dirs.size() && above_ok; ++i) {
      if (depth[i] < cut) above_ok = CheckRange(c, fds, i, i + 1);
      if (depth[i] == cut) tops.push_back(i);
    }
    std::vector<std::size_t> ends;
    for (std::size_t t : tops) {
      std::size_t e = t + 1;
      while (e < c.dirs.size() && depth[e] > cut) ++e;
      ends.push_back(e);
    }
    std::atomic<bool> all{above_ok};
    std::atomic<std::size_t> next{0};
    const std::size_t parts = above_ok ? tops.size() : 0;
    auto work = [&] {
      for (std::size_t k; (k = next.fetch_add(1)) < parts;) {
        if (!CheckRange(c, fds, tops[k], ends[k])) all = false;
      }
    };
    std::vector<std::thread> extra;
    for (int w = 1; w < walkers; ++w) extra.emplace_back(work);
    work();
    for (std::thread& t : extra) t.join();
    for (std::size_t i = 1; i < fds.size(); ++i)
      if (fds[i] >= 0) ::close(fds[i]);
    ok = all;
  }
  if (!ok) {
    c = Cache{};
    c.dirs.emplace_back();
    ListTree(root, 0, c);
    WriteCache(path, c);
  }
  ::close(root);
}

namespace u = cordon::uapi;

void AddPath(int ruleset, const char* path, std::uint64_t access) {
  int fd = ::open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return;  // a root this system does not have
  u::LandlockPathBeneathAttr attr{};
  attr.allowed_access = access;
  attr.parent_fd = fd;
  if (::syscall(u::kNrLandlockAddRule, ruleset, u::kLandlockRulePathBeneath, &attr, 0) != 0) {
    // A file takes only the rights a file can have.
    attr.allowed_access &=
        u::kFsExecute | u::kFsReadFile | u::kFsWriteFile | u::kFsTruncate | u::kFsIoctlDev;
    if (::syscall(u::kNrLandlockAddRule, ruleset, u::kLandlockRulePathBeneath, &attr, 0) != 0)
      Die("landlock_add_rule");
  }
  ::close(fd);
}

int BuildRuleset(const std::string& ws) {
  constexpr std::uint64_t kRead = u::kFsExecute | u::kFsReadFile | u::kFsReadDir;
  constexpr std::uint64_t kAll = kRead | u::kFsWriteFile | u::kFsRemoveDir | u::kFsRemoveFile |
                                 u::kFsMakeChar | u::kFsMakeDir | u::kFsMakeReg | u::kFsMakeSock |
                                 u::kFsMakeFifo | u::kFsMakeBlock | u::kFsMakeSym | u::kFsRefer |
                                 u::kFsTruncate | u::kFsIoctlDev;
  u::LandlockRulesetAttr attr{};
  attr.handled_access_fs = kAll;
  attr.handled_access_net = u::kNetBindTcp | u::kNetConnectTcp;
  attr.scoped = u::kScopeAbstractUnixSocket | u::kScopeSignal;
  int ruleset = static_cast<int>(::syscall(u::kNrLandlockCreateRuleset, &attr, sizeof attr, 0));
  if (ruleset < 0) Die("landlock_create_ruleset");
  for (const char* p : {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/opt", "/proc"})
    AddPath(ruleset, p, kRead);
  AddPath(ruleset, "/dev/null", kRead | u::kFsWriteFile);
  if (!ws.empty()) AddPath(ruleset, ws.c_str(), kAll & ~(u::kFsMakeChar | u::kFsMakeBlock));
  return ruleset;
}

void AddWorkspace(int ruleset, const std::string& ws) {
  constexpr std::uint64_t kAll = u::kFsExecute | u::kFsReadFile | u::kFsReadDir | u::kFsWriteFile |
                                 u::kFsRemoveDir | u::kFsRemoveFile | u::kFsMakeDir |
                                 u::kFsMakeReg | u::kFsMakeSock | u::kFsMakeFifo | u::kFsMakeSym |
                                 u::kFsRefer | u::kFsTruncate | u::kFsIoctlDev;
  AddPath(ruleset, ws.c_str(), kAll);
}

// In the child: the filter, its listener sent to the parent over `sock`.
void InstallFilter(int sock) {
  scmp_filter_ctx ctx = ::seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) Die("seccomp_init");
  for (int nr : {SCMP_SYS(unlinkat), SCMP_SYS(unlink), SCMP_SYS(renameat2), SCMP_SYS(rename),
                 SCMP_SYS(mkdirat), SCMP_SYS(linkat), SCMP_SYS(symlinkat)}) {
    ::seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
  }
  for (int nr : {SCMP_SYS(ptrace), SCMP_SYS(bpf), SCMP_SYS(perf_event_open), SCMP_SYS(kexec_load),
                 SCMP_SYS(init_module), SCMP_SYS(finit_module), SCMP_SYS(userfaultfd),
                 SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key)}) {
    ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
  }
  if (::seccomp_load(ctx) != 0) Die("seccomp_load");
  int listener = ::seccomp_notify_fd(ctx);
  const char byte = 'L';
  if (cordon::supervisor::SendFdRawErrno(sock, &byte, 1, listener) != 0) Die("sendmsg");
  ::close(listener);
}

int RecvListener(int sock) {
  char byte;
  cordon::Result<cordon::Fd> fd = cordon::supervisor::RecvFd(sock, &byte, 1);
  return fd ? fd.value().release() : -1;
}

// Answers each notification "continue" until the listener has no task.
void Serve(int listener) {
  seccomp_notif* req = nullptr;
  seccomp_notif_resp* resp = nullptr;
  if (::seccomp_notify_alloc(&req, &resp) != 0) return;
  while (::seccomp_notify_receive(listener, req) == 0) {
    resp->id = req->id;
    resp->val = 0;
    resp->error = 0;
    resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    ::seccomp_notify_respond(listener, resp);
  }
  ::seccomp_notify_free(req, resp);
}

}  // namespace

int main(int argc, char** argv) {
  bool scan = false, overlap = false;
  int walkers = 2;
  int i = 1;
  for (; i < argc && argv[i][0] == '-' && std::strcmp(argv[i], "--") != 0; ++i) {
    if (std::strcmp(argv[i], "--scan") == 0) {
      scan = true;
    } else if (std::strcmp(argv[i], "--overlap") == 0) {
      overlap = true;
    } else if (std::strcmp(argv[i], "--walkers") == 0 && i + 1 < argc) {
      walkers = std::max(1, std::atoi(argv[++i]));
    } else {
      break;
    }
  }
  if (i + 2 >= argc || std::strcmp(argv[i + 1], "--") != 0) {
    std::fprintf(
        stderr,
        "usage: floor_launcher [--scan [--overlap]] [--walkers N] WORKSPACE -- CMD [ARGS...]\n");
    return 125;
  }
  char ws[PATH_MAX];
  if (::realpath(argv[i], ws) == nullptr) Die("workspace");
  char** cmd = argv + i + 2;

  // With --overlap the scan runs beside the rest of the set-up: the
  // system's rules, the fork, the child's own preparation; the workspace's
  // rule joins the shared ruleset (the child holds the same one) once the
  // scan is done, and only then may the child restrict itself and exec.
  std::thread scanner;
  if (scan && overlap) scanner = std::thread(Scan, std::string(ws), walkers);
  if (scan && !overlap) Scan(ws, walkers);
  const int ruleset = BuildRuleset(overlap ? "" : ws);
  int socks[2], go[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, socks) != 0) Die("socketpair");
  if (::pipe2(go, O_CLOEXEC) != 0) Die("pipe");
  const pid_t pid = ::fork();
  if (pid < 0) Die("fork");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) Die("no_new_privs");
    char byte;
    if (overlap && ::read(go[0], &byte, 1) != 1) _exit(125);
    if (::syscall(u::kNrLandlockRestrictSelf, ruleset, 0) != 0) Die("landlock_restrict_self");
    InstallFilter(socks[1]);
    ::execvp(cmd[0], cmd);
    Die(cmd[0]);
  }
  if (overlap) {
    if (scanner.joinable()) scanner.join();
    AddWorkspace(ruleset, ws);
    if (::write(go[1], "g", 1) != 1) Die("write");
  }
  ::close(socks[1]);
  ::close(ruleset);
  const int listener = RecvListener(socks[0]);
  if (listener >= 0) std::thread(Serve, listener).detach();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
