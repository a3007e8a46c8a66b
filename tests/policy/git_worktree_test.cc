// policy/git_worktree.h: which linked-worktree facts are granted, and what.
#include "policy/git_worktree.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace cordon::policy {
namespace {

GitWorktreeFacts Good() {
  GitWorktreeFacts f;
  f.workspace = "/srv/wt";
  f.admin = "/srv/repo/.git/worktrees/wt";
  f.common = "/srv/repo/.git";
  f.back_link = "/srv/wt/.git";
  f.common_is_repo = true;
  f.has_logs = true;
  return f;
}

const PathRule* Find(const std::vector<PathRule>& v, const std::string& path) {
  auto it = std::find_if(v.begin(), v.end(), [&](const PathRule& r) { return r.path == path; });
  return it == v.end() ? nullptr : &*it;
}

TEST(GitWorktreeTest, ParsesTheGitFileAsGitDoes) {
  EXPECT_EQ(ParseGitFile("gitdir: /srv/repo/.git/worktrees/wt\n"), "/srv/repo/.git/worktrees/wt");
  EXPECT_EQ(ParseGitFile("gitdir: ../repo/.git/worktrees/wt  \r\n"), "../repo/.git/worktrees/wt");
  EXPECT_EQ(ParseGitFile("gitdir:/x"), "");
  EXPECT_EQ(ParseGitFile("ref: refs/heads/main\n"), "");
  EXPECT_EQ(ParseGitFile("gitdir: /a\ngitdir: /b\n"), "");
  EXPECT_EQ(ParseGitFile(""), "");
  EXPECT_EQ(FirstLine("../..\n"), "../..");
  EXPECT_EQ(ResolveGitLink("/srv/repo/.git/worktrees/wt", "../.."),
            "/srv/repo/.git/worktrees/wt/../..");
  EXPECT_EQ(ResolveGitLink("/srv/wt", "/abs"), "/abs");
  EXPECT_EQ(ResolveGitLink("/srv/wt", ""), "");
}

TEST(GitWorktreeTest, WorktreeAdminDirIsTheDirOfANewWorktreesLinks) {
  struct Case {
    const char* rel;
    const char* admin;
  } cases[] = {
      {".git/worktrees/wt2/commondir", ".git/worktrees/wt2"},
      {".git/worktrees/wt2/config.worktree", ".git/worktrees/wt2"},
      {"sub/.git/worktrees/x/commondir", "sub/.git/worktrees/x"},
      {".git/modules/s/worktrees/x/commondir", ".git/modules/s/worktrees/x"},
      {".git/worktrees/wt2/gitdir", ""},     // not a link that redirects config
      {".git/worktrees/commondir", ""},      // no NAME
      {".git/commondir", ""},                // the repository's own
      {"worktrees/wt2/commondir", ""},       // not in a git dir
      {"x/worktrees/wt2/commondir", ""},
      {".git/worktrees/../commondir", ""},   // ".." is no NAME
      {".git/worktrees/wt2/hooks/commondir", ""},
  };
  for (const Case& c : cases) EXPECT_EQ(WorktreeAdminDir(c.rel), c.admin) << c.rel;
  EXPECT_EQ(kWorktreeCommonDir, "../..\n");
}

TEST(GitWorktreeTest, AGitFileLeadsSafelyOnlyToAGitDirTheRulesCover) {
  const std::vector<std::string> writable = {"/ws", "/home/u/.cache/cordon/x"};
  struct Row {
    const char* target;
    bool safe;
  } rows[] = {
      {"/ws/.git", true},
      {"/ws/sub/.git", true},
      {"/ws/.git/worktrees/wt2", true},
      {"/ws/.git/modules/sub", true},
      {"/ws/.git/modules/a/b/worktrees/w", true},
      {"/elsewhere/repo/.git", true},  // in no writable root: the tool could not fill it
      {"/elsewhere/gd", true},
      {"/ws/gd", false},  // a directory of the tool's, any name
      {"/ws/.git/worktrees", false},
      {"/ws/.git/worktrees/w/x", false},
      {"/ws/.git/modules", false},
      {"/ws/.git/objects", false},
      {"/ws/.gitx", false},
      {"/home/u/.cache/cordon/x/r/.git", false},  // a writable root outside the workspace
      {"relative/.git", false},
      {"", false},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(GitFileLeadsSafely(r.target, "/ws", writable), r.safe) << r.target;
  }
}

TEST(GitWorktreeTest, AcceptsOnlyAWorktreeThatLinksBack) {
  EXPECT_EQ(CheckGitWorktree(Good(), "/home/u"), "");
  struct Case {
    const char* what;
    void (*spoil)(GitWorktreeFacts&);
  } cases[] = {
      {"no admin", [](GitWorktreeFacts& f) { f.admin.clear(); }},
      {"no commondir", [](GitWorktreeFacts& f) { f.common.clear(); }},
      {"admin not worktrees/N", [](GitWorktreeFacts& f) { f.admin = "/srv/repo/.git"; }},
      {"admin nested", [](GitWorktreeFacts& f) { f.admin += "/deeper"; }},
      {"admin elsewhere", [](GitWorktreeFacts& f) { f.admin = "/srv/other/worktrees/wt"; }},
      {"worktrees/ alone", [](GitWorktreeFacts& f) { f.admin = "/srv/repo/.git/worktrees"; }},
      {"not a repo", [](GitWorktreeFacts& f) { f.common_is_repo = false; }},
      {"no back link", [](GitWorktreeFacts& f) { f.back_link.clear(); }},
      {"back link elsewhere", [](GitWorktreeFacts& f) { f.back_link = "/srv/other/.git"; }},
      {"common holds the home",
       [](GitWorktreeFacts& f) {
         f.common = "/home";
         f.admin = "/home/worktrees/wt";
       }},
      {"common in the system set",
       [](GitWorktreeFacts& f) {
         f.common = "/usr/share/repo";
         f.admin = "/usr/share/repo/worktrees/wt";
       }},
      {"common is /",
       [](GitWorktreeFacts& f) {
         f.common = "/";
         f.admin = "//worktrees/wt";
       }},
  };
  for (const Case& c : cases) {
    GitWorktreeFacts f = Good();
    c.spoil(f);
    EXPECT_NE(CheckGitWorktree(f, "/home/u"), "") << c.what;
  }
}

TEST(GitWorktreeTest, GrantsTheSharedPartsAndKeepsTheRestReadOnly) {
  const auto rules = GitWorktreeRules(Good(), Profile::kWorkspaceWrite);
  const PathRule* common = Find(rules, "/srv/repo/.git");
  ASSERT_NE(common, nullptr);
  EXPECT_EQ(common->access, Access::kReadOnly);
  EXPECT_FALSE(common->executable);
  EXPECT_EQ(common->source, kGitCommonSource);
  for (const char* rw : {"/srv/repo/.git/objects", "/srv/repo/.git/refs", "/srv/repo/.git/logs",
                         "/srv/repo/.git/worktrees/wt"}) {
    const PathRule* r = Find(rules, rw);
    ASSERT_NE(r, nullptr) << rw;
    EXPECT_EQ(r->access, Access::kReadWrite) << rw;
    EXPECT_FALSE(r->source.empty());
  }
  for (const char* name : {"packed-refs", "packed-refs.lock", "packed-refs.new"}) {
    const PathRule* r = Find(rules, std::string("/srv/repo/.git/") + name);
    ASSERT_NE(r, nullptr) << name;
    EXPECT_EQ(r->access, Access::kReadWrite) << name;
    EXPECT_TRUE(r->replaceable) << name;
  }
  for (const PathRule& r : rules) {
    EXPECT_EQ(r.replaceable, r.source == kGitPackedRefsSource) << r.path;
  }
  for (const char* ro : {"commondir", "gitdir", "config.worktree"}) {
    const PathRule* r = Find(rules, std::string("/srv/repo/.git/worktrees/wt/") + ro);
    ASSERT_NE(r, nullptr) << ro;
    EXPECT_EQ(r->access, Access::kReadOnly) << ro;
  }
  // Nothing else of the common dir: its config, hooks and info are covered
  // by the read-only rule of the common dir alone.
  for (const PathRule& r : rules) {
    EXPECT_TRUE(r.access == Access::kReadOnly || r.path != "/srv/repo/.git") << r.path;
  }
  for (const char* path : {"/srv/repo/.git/config", "/srv/repo/.git/hooks/pre-commit",
                           "/srv/repo/.git/info/exclude", "/srv/repo/.git/worktrees/other/HEAD",
                           "/srv/repo/.git/packed-refs.tmp", "/srv/repo/.git/HEAD.lock",
                           "/srv/repo/.git/worktrees/wt/commondir"}) {
    const PathRule* r = CoveringRule(rules, path);
    ASSERT_NE(r, nullptr) << path;
    EXPECT_EQ(r->access, Access::kReadOnly) << path;
  }
  EXPECT_EQ(CoveringRule(rules, "/srv/repo/.git/worktrees/wt/index")->access, Access::kReadWrite);
}

TEST(GitWorktreeTest, WithoutLogsNoLogsGrant) {
  GitWorktreeFacts f = Good();
  f.has_logs = false;
  EXPECT_EQ(Find(GitWorktreeRules(f, Profile::kWorkspaceWrite), "/srv/repo/.git/logs"), nullptr);
}

TEST(GitWorktreeTest, ReadOnlyProfileReadsOnly) {
  const auto rules = GitWorktreeRules(Good(), Profile::kReadOnly);
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0].path, "/srv/repo/.git");
  EXPECT_EQ(rules[0].access, Access::kReadOnly);
}

TEST(GitWorktreeTest, ACommonDirInTheWorkspaceIsLeftToTheWorkspaceRules) {
  GitWorktreeFacts f = Good();
  f.common = "/srv/wt/main/.git";
  f.admin = "/srv/wt/main/.git/worktrees/wt";
  EXPECT_EQ(CheckGitWorktree(f, ""), "");
  EXPECT_TRUE(GitWorktreeRules(f, Profile::kWorkspaceWrite).empty());
}

}  // namespace
}  // namespace cordon::policy
