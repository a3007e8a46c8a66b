// policy::Decide on what leads git elsewhere: a new worktree's commondir
// (made by the supervisor with git's content), a .git the run makes (no
// symlink, link or rename onto the name; a gitfile checked at the run's
// end), and the link files git worktree remove takes away. One row per
// rule, as decide_test.cc.
#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

#include "policy/decide.h"
#include "tests/policy/decide_rows.h"

namespace cordon::policy {
namespace {

using namespace decide_rows;  // NOLINT(google-build-using-namespace): the table's words

std::vector<Row> Rows() {
  std::vector<Row> rows = {
      // --- a new worktree's commondir (git worktree add; policy/git_worktree.h) ---
      Allow("worktree link: made by an open where there is none", R(kOpen, K::kUnknown).new_wt()),
      Allow("worktree link: made by an open, none there", R(kOpen, K::kAbsent).new_wt()),
      Refuse("worktree link: one there is not written again", R(kOpen).new_wt().born(), EACCES),
      Refuse("worktree link: nor is a symlink there followed", R(kOpen, K::kSymlink).new_wt(),
             EACCES),
      Refuse("worktree link: O_TMPFILE has no name to make it",
             R(kOpen, K::kAbsent).new_wt().tmpfile(), EACCES),
      Refuse("worktree link: made as a symlink", R(kCreate, K::kAbsent).new_wt().make(K::kSymlink),
             EACCES),
      Refuse("worktree link: renamed into place", R(kRen).born().onew_wt(), EACCES),
      Refuse("worktree link: linked into place", R(kLink).onew_wt(), EACCES),
      Refuse("worktree link: renamed away", R(kRen).new_wt().born(), EACCES),
      Refuse("worktree link: its metadata", R(kMeta).new_wt().born(), EACCES),
      Allow("worktree link: removed (git worktree remove)", R(kDel).new_wt().born()),
      Refuse("worktree link: an existing worktree's, removed", R(kDel).prot().born(), EACCES),
      // --- a .git made (policy/git_worktree.h GitFileLeadsSafely) ---
      Allow("git entry: a gitfile, by an open (checked at the end)",
            R(kOpen, K::kAbsent).git_entry()),
      Allow("git entry: a repository's directory",
            R(kCreate, K::kAbsent).git_entry().make(K::kDirectory)),
      Refuse("git entry: a symbolic link", R(kCreate, K::kAbsent).git_entry().make(K::kSymlink),
             EACCES),
      Refuse("git entry: a hard link onto it", R(kLink).ogit_entry(), EACCES),
      Refuse("git entry: renamed onto it", R(kRen).born().ogit_entry(), EACCES),
      Refuse("git entry: exchanged with it", R(kEx).born().git_entry().oborn().to(K::kRegular),
             EACCES),
      Allow("git entry: a .git moved to a .git",
            R(kRen, K::kDirectory).born().git_entry().ogit_entry()),
      Allow("git entry: a .git moved away (absorbgitdirs)",
            R(kRen, K::kDirectory).born().git_entry()),
      // --- a gitfile or an older worktree's commondir (git worktree remove) ---
      Allow("git link file: removed, kept in the journal", R(kDel).removable().kept()),
      Allow("git link file: removed, made in this run", R(kDel).removable().born()),
      Refuse("git link file: removed, the user's, with nothing to keep it", R(kDel).removable(),
             EACCES),
      Refuse("git link file: a .git directory is not",
             R(kDel, K::kDirectory).removable().want_dir().kept(), EACCES),
      Refuse("git link file: nor a symlink", R(kDel, K::kSymlink).removable().kept(), EACCES),
      Refuse("git link file: not written", R(kOpen).removable().kept(), EACCES),
      Refuse("git link file: not made again", R(kCreate, K::kAbsent).removable(), EACCES),
      Refuse("git link file: not renamed away", R(kRen).removable().kept(), EACCES),
      Refuse("git link file: not renamed into place", R(kRen).born().kept().oprot(), EACCES),
  };
  return rows;
}

TEST(DecideGit, Table) { ExpectRows(Rows()); }

}  // namespace
}  // namespace cordon::policy
