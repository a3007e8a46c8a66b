// The keys of a git config that run a program (issue 27 item 7): each one
// found in each of git's spellings, the honest keys git init, clone and
// submodule write left alone, and what cannot be parsed reported.
#include "policy/git_config_keys.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cordon::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(GitConfigKeys, EachRunnableKeyIsFound) {
  const char* rows[][2] = {
      {"[core]\n\tfsmonitor = touch /tmp/x\n", "core.fsmonitor"},
      {"[core]\n\thooksPath = /tmp/hooks\n", "core.hookspath"},
      {"[core]\n\tsshCommand = sh -c x\n", "core.sshcommand"},
      {"[core]\n\tpager = sh -c x\n", "core.pager"},
      {"[core]\n\teditor = x\n", "core.editor"},
      {"[core]\n\taskPass = x\n", "core.askpass"},
      {"[core]\n\tgitProxy = x\n", "core.gitproxy"},
      {"[include]\n\tpath = ../evil\n", "include.path"},
      {"[includeIf \"gitdir:/\"]\n\tpath = ../evil\n", "includeif.gitdir:/.path"},
      {"[filter \"lfs\"]\n\tclean = x %f\n", "filter.lfs.clean"},
      {"[filter \"lfs\"]\n\tsmudge = x\n", "filter.lfs.smudge"},
      {"[filter \"lfs\"]\n\tprocess = x\n", "filter.lfs.process"},
      {"[diff]\n\texternal = x\n", "diff.external"},
      {"[diff \"pdf\"]\n\ttextconv = x\n", "diff.pdf.textconv"},
      {"[merge \"ours\"]\n\tdriver = x\n", "merge.ours.driver"},
      {"[credential]\n\thelper = x\n", "credential.helper"},
      {"[gpg]\n\tprogram = x\n", "gpg.program"},
      {"[sequence]\n\teditor = x\n", "sequence.editor"},
      {"[pager]\n\tlog = x\n", "pager.log"},
      {"[remote \"o\"]\n\tuploadpack = x\n", "remote.o.uploadpack"},
      {"[protocol \"ext\"]\n\tallow = always\n", "protocol.ext.allow"},
      {"[alias]\n\tst = !sh -c x\n", "alias.st"},
      {"[submodule \"s\"]\n\tupdate = !x\n", "submodule.s.update"},
      {"[difftool \"t\"]\n\tcmd = x\n", "difftool.t.cmd"},
  };
  for (const auto& r : rows) {
    EXPECT_THAT(RunnableGitConfigKeys(r[0]), ElementsAre(r[1])) << r[0];
  }
}

TEST(GitConfigKeys, GitsOtherSpellingsAreFoundToo) {
  // Case, [section.sub], a key on the header's line, no spaces, a bare key
  // (true), a continuation before it, a comment after it.
  EXPECT_THAT(RunnableGitConfigKeys("[CORE]\nFSMONITOR=x\n"), ElementsAre("core.fsmonitor"));
  EXPECT_THAT(RunnableGitConfigKeys("[filter.x]\nclean=y\n"), ElementsAre("filter.x.clean"));
  EXPECT_THAT(RunnableGitConfigKeys("[core] pager = x\n"), ElementsAre("core.pager"));
  EXPECT_THAT(RunnableGitConfigKeys("[core]\nfsmonitor\n"), ElementsAre("core.fsmonitor"));
  EXPECT_THAT(RunnableGitConfigKeys("[user]\nname = a \\\nb\n[core]\npager=x ; c\n"),
              ElementsAre("core.pager"));
  EXPECT_THAT(RunnableGitConfigKeys("[alias]\n  x = \"!sh\"\n"), ElementsAre("alias.x"));
}

TEST(GitConfigKeys, TheHonestKeysGitWritesAreLeftAlone) {
  const char* honest =
      "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
      "\tlogallrefupdates = true\n\tworktree = ../../../sub\n"
      "[user]\n\tname = A \"quoted # not a comment\" name\n\temail = a@b\n"
      "[remote \"origin\"]\n\turl = https://example.invalid/r.git\n"
      "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
      "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n"
      "[submodule \"s\"]\n\turl = ../s\n\tactive = true\n\tupdate = rebase\n"
      "[alias]\n\tco = checkout\n[protocol \"file\"]\n\tallow = always\n"
      "# a comment\n; another\n\n";
  EXPECT_THAT(RunnableGitConfigKeys(honest), IsEmpty());
}

TEST(GitConfigKeys, WhatCannotBeParsedIsReportedNotSkipped) {
  EXPECT_THAT(RunnableGitConfigKeys("[core\nfsmonitor=x\n"),
              ElementsAre("(unparsable line 1)", "(unparsable line 2)"));
  EXPECT_THAT(RunnableGitConfigKeys("fsmonitor = x\n"), ElementsAre("(unparsable line 1)"));
  EXPECT_THAT(RunnableGitConfigKeys("[core]\n=x\n"), ElementsAre("(unparsable line 2)"));
}

// A config the user had: git may register a submodule in it and set
// user.name/email; every other entry stands as it was, in its order.
TEST(ChangedBeyondRegistration, OnlyASubmodulesRegistrationAndTheIdentityMayChange) {
  const std::string user =
      "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://example.invalid/r\n"
      "[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n";
  EXPECT_THAT(ChangedBeyondRegistration(user, user), IsEmpty());
  EXPECT_THAT(ChangedBeyondRegistration(
                  user, user + "[submodule \"a/b\"]\n\turl = ../b\n\tactive = true\n"
                               "\tupdate = rebase\n[user]\n\temail = me@x\n\tname = Me\n"),
              IsEmpty());
  EXPECT_THAT(ChangedBeyondRegistration(user + "[submodule \"s\"]\n\turl = ../s\n", user),
              IsEmpty())
      << "deinit takes the registration away";
  // The refusals, each named.
  EXPECT_THAT(ChangedBeyondRegistration(user, user + "[core]\n\tpager = sh\n"),
              ElementsAre("core.pager"));
  EXPECT_THAT(ChangedBeyondRegistration(user, user + "[submodule \"s\"]\n\tupdate = !sh\n"),
              ElementsAre("submodule.s.update"));
  EXPECT_THAT(ChangedBeyondRegistration(user, user + "[url \"/evil\"]\n\tinsteadOf = /\n"),
              ElementsAre("url./evil.insteadof"));
  std::string moved = user;
  moved.replace(moved.find("example.invalid"), 15, "attacker.invalid");
  EXPECT_THAT(ChangedBeyondRegistration(user, moved), ElementsAre("remote.origin.url"));
  std::string dropped = user.substr(0, user.find("[filter"));
  EXPECT_THAT(ChangedBeyondRegistration(user, dropped), ElementsAre("filter.lfs.clean"));
  EXPECT_THAT(ChangedBeyondRegistration(user, user + "[core\n"),
              ElementsAre("(unparsable line 7)"));
  EXPECT_THAT(ChangedBeyondRegistration(user, "[user]\n\tname = x\n" + user), IsEmpty())
      << "identity entries anywhere";
}

// core.excludesFile as git takes it: keys case-insensitive, the last one
// set wins, a subsection's key is another key, a quoted value unquoted.
TEST(GitConfigValue, TakesTheLastValueOfTheKey) {
  EXPECT_EQ(GitConfigValue("[core]\n\texcludesFile = ~/.gi\n", "core.excludesfile"), "~/.gi");
  EXPECT_EQ(GitConfigValue("[core]\n\texcludesfile = /a\n[Core]\nExcludesFile = \"/b c\"\n",
                           "core.excludesfile"),
            "/b c");
  EXPECT_EQ(GitConfigValue("[core \"x\"]\n\texcludesFile = /a\n", "core.excludesfile"), "");
  EXPECT_EQ(GitConfigValue("[user]\n\tname = n\n", "core.excludesfile"), "");
  EXPECT_EQ(GitConfigValue("", "core.excludesfile"), "");
}

}  // namespace
}  // namespace cordon::policy
