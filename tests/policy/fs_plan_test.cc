#include "policy/fs_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "tests/support/fake_tree.h"
#include "tests/support/test_env.h"

namespace cordon::policy {
namespace {

using ::testing::UnorderedElementsAre;

const auto Tree = cordon::testing::FakeTree;

std::vector<std::string> Paths(const std::vector<Grant>& g, bool list_only) {
  std::vector<std::string> out;
  for (const auto& x : g) {
    if (x.list_only == list_only) out.push_back(x.path);
  }
  return out;
}

TEST(PlanGrants, WithoutDenialsEachRuleIsOneGrant) {
  auto g = PlanGrants({PathRule::ReadOnly("/usr"), PathRule::ReadWrite("/w")}, Tree({}));
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[1].access, Access::kReadWrite);
  EXPECT_FALSE(g[1].list_only);
}

TEST(PlanGrants, DenialInsideAllowedDirectoryGrantsOnlyTheSiblings) {
  auto list = Tree({{"/w", {"a", "b", "secret"}}, {"/w/b", {"x", "y"}}});
  auto g = PlanGrants({PathRule::ReadWrite("/w"), PathRule::Denied("/w/secret")}, list);
  EXPECT_THAT(Paths(g, false), UnorderedElementsAre("/w/a", "/w/b"));
  EXPECT_THAT(Paths(g, true), UnorderedElementsAre("/w"));
  for (const auto& x : g) EXPECT_NE(x.path, "/w/secret");
}

// A denial beneath a read-write grant carves it (what the run makes beside
// it gets no grant: the broker's case), also below a read-only rule there;
// a read-only rule inside a read-write one keeps reads whole; a denial
// beneath a read-only grant alone is beside nothing the run can make; a
// denial of a path nothing grants carves nothing.
TEST(CarvesReads, OnlyADenialBeneathAReadWriteGrant) {
  EXPECT_TRUE(CarvesReads({PathRule::ReadWrite("/w"), PathRule::Denied("/w/.env")}));
  EXPECT_TRUE(CarvesReads({PathRule::ReadWrite("/w"), PathRule::ReadOnly("/w/docs"),
                           PathRule::Denied("/w/docs/secret")}));
  EXPECT_FALSE(CarvesReads({PathRule::ReadOnly("/etc"), PathRule::Denied("/etc/ssh/key")}));
  EXPECT_FALSE(CarvesReads({PathRule::ReadWrite("/w"), PathRule::ReadOnly("/w/.git/hooks")}));
  EXPECT_FALSE(CarvesReads({PathRule::ReadWrite("/w"), PathRule::Denied("/home/u/.ssh")}));
  EXPECT_FALSE(CarvesReads({PathRule::ReadWrite("/w"), PathRule::Denied("/w")}));
  EXPECT_FALSE(CarvesReads({PathRule::ReadWrite("/w")}));
}

// A read-only or denied path beneath a read-write grant carves its writes
// (the carved directory makes and removes no entry at the kernel layer);
// holes in a read-only grant carve no write.
TEST(CarvesWrites, AnyHoleBeneathAReadWriteGrant) {
  EXPECT_TRUE(CarvesWrites({PathRule::ReadWrite("/w"), PathRule::ReadOnly("/w/.git/config")}));
  EXPECT_TRUE(CarvesWrites({PathRule::ReadWrite("/w"), PathRule::Denied("/w/.env")}));
  EXPECT_FALSE(CarvesWrites({PathRule::ReadOnly("/etc"), PathRule::Denied("/etc/ssh/key")}));
  EXPECT_FALSE(CarvesWrites({PathRule::ReadWrite("/w"), PathRule::ReadWrite("/w/sub")}));
  EXPECT_FALSE(CarvesWrites({PathRule::ReadWrite("/w"), PathRule::ReadOnly("/w")}));
  EXPECT_FALSE(CarvesWrites({PathRule::ReadWrite("/w"), PathRule::ReadOnly("/usr")}));
}

TEST(PlanGrants, DeepDenialExpandsEveryLevelOnTheWay) {
  auto list = Tree({{"/etc", {"passwd", "ssh"}}, {"/etc/ssh", {"ssh_config", "ssh_host_rsa_key"}}});
  auto g = PlanGrants(
      {PathRule::ReadOnly("/etc"), PathRule::Denied("/etc/ssh/ssh_host_rsa_key")}, list);
  EXPECT_THAT(Paths(g, false), UnorderedElementsAre("/etc/passwd", "/etc/ssh/ssh_config"));
  EXPECT_THAT(Paths(g, true), UnorderedElementsAre("/etc", "/etc/ssh"));
}

// The run journals: Landlock passes a directory's listing right down its
// whole tree, so the directories on the way to an unlisted denial get no
// right of their own; their other entries keep the rule's.
TEST(PlanGrants, AnUnlistedDenialLeavesNoListingRightOnTheWayDown) {
  auto list = Tree({{"/h", {"a", "state"}}, {"/h/state", {"cordon"}},
                    {"/h/state/cordon", {"caches", "journal"}}});
  auto g = PlanGrants({PathRule::ReadWrite("/h"),
                       PathRule::DeniedUnlisted("/h/state/cordon/journal", "the run journals")},
                      list);
  EXPECT_THAT(Paths(g, false), UnorderedElementsAre("/h/a", "/h/state/cordon/caches"));
  EXPECT_THAT(Paths(g, true), ::testing::IsEmpty()) << "READ_DIR on /h would list the journal";
  // A plain denial beside it keeps the listing right on its own way down.
  g = PlanGrants({PathRule::ReadWrite("/h"), PathRule::Denied("/h/state/cordon/journal")}, list);
  EXPECT_THAT(Paths(g, true), UnorderedElementsAre("/h", "/h/state", "/h/state/cordon"));
}

TEST(PlanGrants, DenialOfTheRuleItselfRemovesIt) {
  auto g = PlanGrants({PathRule::ReadOnly("/opt"), PathRule::Denied("/opt")}, Tree({}));
  EXPECT_TRUE(g.empty());
}

TEST(PlanGrants, MoreSpecificAllowInsideDenialWins) {
  auto list = Tree({{"/w", {"secret", "a"}}, {"/w/secret", {"pub", "priv"}}});
  auto g = PlanGrants({PathRule::ReadWrite("/w"), PathRule::Denied("/w/secret"),
                       PathRule::ReadOnly("/w/secret/pub")},
                      list);
  EXPECT_THAT(Paths(g, false), UnorderedElementsAre("/w/a", "/w/secret/pub"));
}

TEST(PlanGrants, DenialOutsideEveryRuleChangesNothing) {
  auto g = PlanGrants({PathRule::ReadOnly("/usr"), PathRule::Denied("/home/x")}, Tree({}));
  EXPECT_THAT(Paths(g, false), UnorderedElementsAre("/usr"));
}

Access AccessOf(const std::vector<Grant>& g, const std::string& path) {
  for (const auto& x : g) {
    if (x.path == path && !x.list_only) return x.access;
  }
  return Access::kDenied;  // not granted
}

TEST(PlanGrants, ReadOnlyRuleInsideReadWriteIsCarvedOut) {
  auto list = Tree({{"/w", {".git", "src"}}, {"/w/.git", {"config", "hooks", "objects"}}});
  auto g = PlanGrants({PathRule::ReadWrite("/w"), PathRule::ReadOnly("/w/.git/hooks"),
                       PathRule::ReadOnly("/w/.git/config")},
                      list);
  // Without the carve, /w's read-write grant would cover the hooks.
  for (const auto& x : g) {
    if (x.path == "/w") {
      EXPECT_EQ(x.access, Access::kReadOnly) << "parent must not be rw";
    }
  }
  EXPECT_EQ(AccessOf(g, "/w/.git/hooks"), Access::kReadOnly);
  EXPECT_EQ(AccessOf(g, "/w/.git/config"), Access::kReadOnly);
  EXPECT_EQ(AccessOf(g, "/w/.git"), Access::kReadOnly);
  EXPECT_EQ(AccessOf(g, "/w/.git/objects"), Access::kReadWrite) << "the honest sibling";
  EXPECT_EQ(AccessOf(g, "/w/src"), Access::kReadWrite);
  for (const auto& x : g) {
    if (x.path == "/w/.git/hooks") {
      EXPECT_NE(x.access, Access::kReadWrite);
    }
  }
}

TEST(PlanGrants, ReadOnlyInsideReadOnlyChangesNothing) {
  auto g = PlanGrants({PathRule::ReadOnly("/u"), PathRule::ReadOnly("/u/x")}, Tree({}));
  EXPECT_THAT(Paths(g, false), UnorderedElementsAre("/u", "/u/x"));
}

TEST(PlanGrants, DenialBelowAReadOnlyHoleStaysDenied) {
  auto list = Tree({{"/w", {"ro", "b"}}, {"/w/ro", {"secret", "pub"}}});
  auto g = PlanGrants({PathRule::ReadWrite("/w"), PathRule::ReadOnly("/w/ro"),
                       PathRule::Denied("/w/ro/secret")},
                      list);
  for (const auto& x : g) EXPECT_NE(x.path, "/w/ro/secret");
  EXPECT_EQ(AccessOf(g, "/w/ro/pub"), Access::kReadOnly);
  EXPECT_EQ(AccessOf(g, "/w/b"), Access::kReadWrite);
}

TEST(PlanGrants, EntriesCarryTheListingsType) {
  DirLister list = [](const std::string& d) {
    std::vector<DirEntry> out;
    if (d == "/w") out = {{"d", EntryType::kDirectory}, {"f", EntryType::kOther}, {"s"}};
    return out;
  };
  auto g = PlanGrants({PathRule::ReadWrite("/w"), PathRule::Denied("/w/s")}, list);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].path, "/w");
  EXPECT_EQ(g[0].type, EntryType::kDirectory);
  EXPECT_EQ(g[1].type, EntryType::kDirectory);
  EXPECT_EQ(g[2].type, EntryType::kOther);
}

// A carve grants each entry by what it resolves to (the ruleset opens the
// grant's path, following links), so a link that leads to a denied path,
// into one or above one would hand it back. Each row is one entry of the
// carved home; each can fail alone.
TEST(PlanGrants, ACarvedLinkToADeniedPathIsGrantedNothing) {
  struct Row {
    const char* name;
    bool symlink;
    const char* target;  // realpath of the link; "" when it does not resolve
    bool granted;
    const char* denied;  // the denial the skip names ("" for none)
  };
  const Row rows[] = {
      {"notes.txt", false, "", true, ""},
      {"x", true, "/h/.ssh", false, "/h/.ssh"},               // the denied path itself
      {"key", true, "/h/.ssh/id_ed25519", false, "/h/.ssh"},  // into it
      {"y", true, "/h", false, "/h/.ssh"},                    // above it
      {"root", true, "/", false, "/h/.ssh"},
      // ~/.gnupg -> dotfiles/gnupg: the denial is normalised to the target.
      {".gnupg", true, "/h/dotfiles/gnupg", false, "/h/dotfiles/gnupg"},
      {"netrc", true, "/h/.netrc", false, "/h/.netrc"},  // a denied file
      {"dangling", true, "", false, ""},
      {"docs", true, "/h/dotfiles/vimrc", true, ""},  // an honest link stays
      {"resolv.conf", true, "/run/resolv.conf", true, ""},
      {"sshish", true, "/h/.sshfoo", true, ""},  // a name prefix is not beneath
  };
  DirLister list = [&](const std::string& d) {
    std::vector<DirEntry> out;
    if (d == "/h") {
      for (const Row& r : rows) out.push_back({r.name, EntryType::kUnknown, r.symlink, r.target});
      out.push_back({"dotfiles", EntryType::kDirectory});
    }
    if (d == "/h/dotfiles") out = {{"gnupg", EntryType::kDirectory}, {"vimrc", EntryType::kOther}};
    return out;
  };
  std::vector<SkippedLink> skipped;
  auto g = PlanGrants({PathRule::ReadOnly("/h"), PathRule::Denied("/h/.ssh"),
                       PathRule::Denied("/h/dotfiles/gnupg"), PathRule::Denied("/h/.netrc")},
                      list, &skipped);
  for (const Row& r : rows) {
    const std::string path = std::string("/h/") + r.name;
    EXPECT_EQ(AccessOf(g, path) == Access::kReadOnly, r.granted) << path << " -> " << r.target;
    auto s = std::find_if(skipped.begin(), skipped.end(),
                          [&](const SkippedLink& l) { return l.path == path; });
    EXPECT_EQ(s != skipped.end(), !r.granted && r.symlink) << path << " in the skip list";
    if (s != skipped.end()) {
      EXPECT_EQ(s->denied, r.denied) << path;
      EXPECT_EQ(s->target, r.target) << path;
    }
  }
  EXPECT_EQ(AccessOf(g, "/h/dotfiles/vimrc"), Access::kReadOnly);
  EXPECT_EQ(AccessOf(g, "/h/dotfiles/gnupg"), Access::kDenied);
  EXPECT_EQ(AccessOf(g, "/h/dotfiles"), Access::kDenied) << "only listable: it holds a denial";
  // Without a carve (nothing denied inside) the links are not looked at.
  auto whole = PlanGrants({PathRule::ReadOnly("/h")}, list);
  EXPECT_THAT(Paths(whole, false), UnorderedElementsAre("/h"));
}

// A denial elsewhere counts too: a link in a carved /w to the denied /h/.ssh.
TEST(PlanGrants, ALinkToADenialOutsideTheCarvedRuleIsGrantedNothing) {
  DirLister list = [](const std::string& d) {
    std::vector<DirEntry> out;
    if (d == "/w") {
      out = {{"secret", EntryType::kOther},
             {"keys", EntryType::kUnknown, true, "/h/.ssh"},
             {"src", EntryType::kDirectory}};
    }
    return out;
  };
  auto g = PlanGrants(
      {PathRule::ReadWrite("/w"), PathRule::Denied("/w/secret"), PathRule::Denied("/h/.ssh")},
      list);
  EXPECT_THAT(Paths(g, false), UnorderedElementsAre("/w/src"));
}

}  // namespace
}  // namespace cordon::policy
