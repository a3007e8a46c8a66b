#include "supervisor/journal/journal_place.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "supervisor/owned_dir.h"
#include "supervisor/workspace_store.h"

namespace cordon::supervisor {
namespace {

constexpr char kRuns[] = "runs";

bool Beneath(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         (dir == "/" || path[dir.size()] == '/'));
}

// The top of the mount `workspace` is on: its highest ancestor (itself
// included) with the same mount id.
std::string MountTop(const std::string& workspace) {
  Fd fd(::open(workspace.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return {};
  const uint64_t id = MountId(fd.get());
  if (id == 0) return {};
  std::string top = workspace;
  while (top != "/") {
    std::string up = top.substr(0, top.rfind('/'));
    if (up.empty()) up = "/";
    Fd pfd(::open(up.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!pfd || MountId(pfd.get()) != id) break;
    top = up;
  }
  return top;
}

// The candidate at `path` for `workspace`, opened (created when `create`).
Result<JournalPlace> OpenCandidate(const std::string& path, const std::string& workspace,
                                   bool create) {
  if (!create) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return Errno("lstat", path);
  }
  Result<OwnedDir> dir = OpenOwnedDirPath(path, "journal directory");
  if (!dir) return dir.error();
  if (Beneath(dir->path, workspace)) {
    return SysError{EXDEV, "journal", dir->path + " lies inside the workspace"};
  }
  Fd ws(::open(workspace.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!ws) return Errno("open", workspace);
  const uint64_t id = MountId(ws.get());
  if (id == 0 || MountId(dir->fd.get()) != id) {
    return SysError{EXDEV, "journal", dir->path + " is not on the workspace's mount"};
  }
  Result<Fd> runs = create ? EnsureDirAt(dir->fd.get(), kRuns, ::geteuid(), dir->path + "/runs")
                           : OpenDirAt(dir->fd.get(), kRuns);
  if (!runs) return runs.error();
  if (Status s = CheckOwned(runs->get(), ::geteuid(), dir->path + "/runs", S_IFDIR); !s) {
    return s.error();
  }
  return JournalPlace{dir->path, std::move(runs.value())};
}

}  // namespace

bool HasReflinks(const std::string& path) {
  struct statfs fs;
  if (::statfs(path.c_str(), &fs) != 0) return false;
  constexpr unsigned long kBtrfs = 0x9123683e, kXfs = 0x58465342, kBcachefs = 0xca451a4e;
  const auto type = static_cast<unsigned long>(fs.f_type);
  return type == kBtrfs || type == kXfs || type == kBcachefs;
}

uint64_t MountId(int fd) {
  // glibc's struct statx (2.36) has no stx_mnt_id yet: the kernel's layout,
  // where stx_mnt_id follows the device numbers at offset 0x90.
  alignas(8) unsigned char buf[256] = {};
  if (::syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_MNT_ID, buf) != 0) return 0;
  uint32_t mask;
  std::memcpy(&mask, buf, sizeof mask);
  if (!(mask & STATX_MNT_ID)) return 0;
  uint64_t id;
  std::memcpy(&id, buf + 0x90, sizeof id);
  return id;
}

std::vector<std::string> JournalCandidates(const std::string& workspace) {
  std::vector<std::string> out = {DefaultStateHome() + "/cordon/journal"};
  std::string top = MountTop(workspace);
  if (!top.empty() && top != workspace) {
    out.push_back((top == "/" ? "" : top) + "/.cordon-journal-" + std::to_string(::geteuid()));
  }
  return out;
}

Result<JournalPlace> OpenJournalPlace(const std::string& workspace) {
  std::string why;
  const std::vector<std::string> candidates = JournalCandidates(workspace);
  for (const std::string& c : candidates) {
    if (c == candidates.front() && !StateHomeUsable()) {
      why = "the state home's directory does not exist";
      continue;
    }
    Result<JournalPlace> p = OpenCandidate(c, workspace, true);
    if (p) return p;
    if (!why.empty()) why += "; ";
    why += Describe(p.error());
  }
  return SysError{EXDEV, "journal", why.empty() ? "the workspace is a mount of its own" : why};
}

std::vector<JournalPlace> ExistingJournalPlaces(const std::string& workspace) {
  std::vector<JournalPlace> out;
  for (const std::string& c : JournalCandidates(workspace)) {
    if (Result<JournalPlace> p = OpenCandidate(c, workspace, false)) out.push_back(std::move(p.value()));
  }
  return out;
}

}  // namespace cordon::supervisor
