// Gitfiles the tool writes (a `.git` file "gitdir: X": git worktree add,
// git submodule absorbgitdirs, git init --separate-git-dir): git in that
// directory obeys the config and hooks of X when you run it there later.
// The content is written after the open, so it is read at the run's end,
// when no process of the run is left to change it: a gitfile that leads
// where no rule protects (policy::GitFileLeadsSafely) is moved aside.
#include <fcntl.h>
#include <limits.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "policy/git_worktree.h"
#include "supervisor/emulator.h"
#include "supervisor/owned_dir.h"

namespace cordon::supervisor {
namespace {

// git's read_gitfile refuses a larger one ("too large").
constexpr std::size_t kMaxGitFile = 1 << 20;

}  // namespace

void Emulator::NoteGitFile(const std::string& abs) {
  std::lock_guard<std::mutex> l(end_lists_mu_);
  if (std::find(gitfiles_.begin(), gitfiles_.end(), abs) == gitfiles_.end()) {
    gitfiles_.push_back(abs);
  }
}

void Emulator::CheckGitFilesLeft() {
  std::lock_guard<std::mutex> l(end_lists_mu_);
  std::string workspace;
  std::vector<std::string> writable;
  for (const WriteRoot& root : rules().roots.roots()) {
    if (root.workspace) workspace = root.path;
    writable.push_back(root.path);
  }
  for (const std::string& abs : gitfiles_) {
    auto loc = rules().roots.Locate(abs);
    if (!loc) continue;
    auto parent = WriteRoots::OpenParent(loc.value());
    if (!parent) continue;
    Fd fd(
        ::openat(parent->get(), loc->name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat st;
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    Result<std::string> text = ReadSmallFile(fd.get(), abs, kMaxGitFile);
    if (!text) continue;  // past git's bound: git refuses it
    const std::string target = policy::ParseGitFile(text.value());
    if (target.empty()) continue;  // not a gitfile: git refuses it
    const std::string dir = abs.substr(0, abs.rfind('/'));
    char real[PATH_MAX];
    const std::string named = policy::ResolveGitLink(dir.empty() ? "/" : dir, target);
    // One that leads nowhere: git refuses it.
    if (::realpath(named.c_str(), real) == nullptr) continue;
    if (policy::GitFileLeadsSafely(real, workspace, writable)) continue;
    const std::string aside = TempSibling(loc->name);
    if (aside.empty() || ::renameat2(parent->get(), loc->name.c_str(), parent->get(), aside.c_str(),
                                     RENAME_NOREPLACE) != 0) {
      spdlog::error(
          "{} leads git to {}, a directory of the run's whose config and hooks no rule "
          "protects, and could not be moved aside: {}; do not run git there",
          abs, real, std::strerror(errno));
      continue;
    }
    spdlog::warn(
        "{} (made in this run) leads git to {}, a directory of the run's whose config "
        "and hooks no rule protects: moved aside to {}, so that git run there later "
        "does not obey them",
        abs, real, aside);
  }
  gitfiles_.clear();
}

}  // namespace cordon::supervisor
