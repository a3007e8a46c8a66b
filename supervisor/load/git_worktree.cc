#include "supervisor/load/git_worktree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd.h"
#include "supervisor/load/normalise.h"

namespace cordon::supervisor {
namespace {

// A link file is a line; anything larger is not one.
constexpr std::size_t kMaxLinkFile = 4096;

// The content of a regular file (not followed through a symlink), empty
// when it is not one or is larger than a link file may be.
std::string ReadLinkFile(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st;
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::size_t>(st.st_size) > kMaxLinkFile) {
    return {};
  }
  std::string out(kMaxLinkFile + 1, '\0');
  ssize_t n = ::read(fd.get(), out.data(), out.size());
  if (n < 0 || static_cast<std::size_t>(n) > kMaxLinkFile) return {};
  out.resize(static_cast<std::size_t>(n));
  return out;
}

bool Is(const std::string& path, mode_t type) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == type;
}

// The canonical directory `path` names, or empty.
std::string RealDir(const std::string& path) {
  if (path.empty()) return {};
  std::string real = RealPathOrEmpty(path);
  return !real.empty() && Is(real, S_IFDIR) ? real : std::string();
}

}  // namespace

GitWorktreeProbe ProbeGitWorktree(const std::string& workspace) {
  GitWorktreeProbe probe;
  const std::string dot_git = workspace + "/.git";
  struct stat st;
  if (::lstat(dot_git.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return probe;
  probe.present = true;
  policy::GitWorktreeFacts& f = probe.facts;
  f.workspace = workspace;
  probe.named = policy::ParseGitFile(ReadLinkFile(dot_git));
  f.admin = RealDir(policy::ResolveGitLink(workspace, probe.named));
  if (f.admin.empty()) return probe;
  f.common = RealDir(
      policy::ResolveGitLink(f.admin, policy::FirstLine(ReadLinkFile(f.admin + "/commondir"))));
  // git's link back names the .git file; the file, not its directory, so
  // its directory is resolved and the name kept.
  const std::string back =
      policy::ResolveGitLink(f.admin, policy::FirstLine(ReadLinkFile(f.admin + "/gitdir")));
  const std::size_t slash = back.rfind('/');
  if (slash != std::string::npos && back.substr(slash + 1) == ".git") {
    const std::string dir = RealDir(slash == 0 ? "/" : back.substr(0, slash));
    if (!dir.empty() && Is(dir + "/.git", S_IFREG)) f.back_link = dir + "/.git";
  }
  if (!f.common.empty()) {
    f.common_is_repo = Is(f.common + "/objects", S_IFDIR) && Is(f.common + "/refs", S_IFDIR) &&
                       Is(f.common + "/HEAD", S_IFREG);
    f.has_logs = Is(f.common + "/logs", S_IFDIR);
  }
  return probe;
}

void AddGitWorktree(policy::Policy& p, const std::string& home, std::vector<std::string>& warnings) {
  if (p.workspace.empty()) return;
  GitWorktreeProbe probe = ProbeGitWorktree(p.workspace);
  if (!probe.present) return;
  std::string why = probe.named.empty() ? "it is not a 'gitdir: PATH' file"
                                        : policy::CheckGitWorktree(probe.facts, CanonicalHome(home));
  if (!why.empty()) {
    warnings.push_back("git worktree: " + p.workspace + "/.git ('" + probe.named +
                       "') not granted: " + why);
    return;
  }
  for (policy::PathRule& r : policy::GitWorktreeRules(probe.facts, p.profile)) {
    p.base_paths.push_back(std::move(r));
  }
}

}  // namespace cordon::supervisor
