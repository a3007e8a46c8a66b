// Issue 24 item 7, "later-created and sibling paths": `--deny WS/.env`
// carves the workspace root (its entries at launch are granted one by one),
// so what the run makes beside the carve-out has no kernel read grant. The
// supervisor opens such reads for the tool (the broker: an openat carrying
// wire::kBrokerOpenFlag, which the preload adds after the kernel refuses a
// read, and a static tool may add itself) when policy lets the tool read
// them, and refuses exactly what the rules refuse: the denied path, a
// denial that comes into being during the run, another name of a denied
// file, a deny glob's new match, a symlink leading to any of them or out of
// every rule. Real cordon binary, real Landlock; ground truth is what the
// tool read and what is on disk afterwards.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Quote(const std::string& s) { return "'" + s + "'"; }

// The static probe's brokered read of `rel` (raw openat with the broker
// bit, no preload): prints the bytes, then "static:REL:STATUS".
std::string StaticBrokerRead(const std::string& rel) {
  return std::string(PROBE_STATIC) + " broker-read " + Quote(rel) + "; echo \" static:" + rel +
         ":$?\"; ";
}

// cat (through the preload's retry), then the static probe.
std::string Reads(const std::vector<std::string>& rels) {
  std::string s;
  for (const std::string& r : rels) s += "cat " + Quote(r) + " 2>/dev/null; " + StaticBrokerRead(r);
  return s;
}

class BrokerTest : public ::testing::TestWithParam<bool /*notify_all*/> {
 protected:
  void SetUp() override {
    WriteFile(t_.Ws(".env"), "SECRET\n");
    ASSERT_EQ(::mkdir(t_.Ws("sub").c_str(), 0755), 0);
    WriteFile(t_.Ws("sub/old"), "OLD\n");
    WriteFile(t_.Out("secret"), "OUTSIDE-SECRET\n");
  }

  RunResult Run(const std::vector<std::string>& extra, const std::string& script,
                const std::vector<std::string>& env = {}) {
    std::vector<std::string> args = {"run",       "--workspace", t_.ws(),       "--ro",
                                     ProbeDir(),  "--profile",   "workspace-write"};
    args.insert(args.end(), extra.begin(), extra.end());
    if (GetParam()) args.push_back("--test-force-notify-all");
    args.insert(args.end(), {"--", "sh", "-c", script});
    return RunCordon(args, t_.ws(), env);
  }

  // Runs `script` after `host` has changed the workspace from outside the
  // sandbox: the tool makes "ready", waits for "go", which is made once
  // `host` returns (a file that comes into being during the run). A first
  // brokered read comes before: what the broker knows of the rules was
  // gathered before those files were there.
  RunResult RunWhile(const std::vector<std::string>& extra, const std::function<void()>& host,
                     const std::string& script) {
    std::thread outside([&] {
      for (int i = 0; i < 400 && !Exists(t_.Ws("ready")); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
      }
      host();
      WriteFile(t_.Ws("go"), "");
    });
    RunResult r = Run(extra, "echo EARLY > early; cat early; touch ready; i=0; while [ ! -e go ] && [ $i -lt 400 ]; do "
                             "sleep 0.025; i=$((i+1)); done; " + script);
    outside.join();
    return r;
  }

  std::vector<std::string> DenyEnv() const { return {"--deny", t_.Ws(".env")}; }

  ScratchTree t_;
};

TEST_P(BrokerTest, FilesAndDirectoriesMadeBesideADeniedPathAreReadable) {
  RunResult r = Run(DenyEnv(),
                    "echo NEW > newfile; mkdir -p .venv; echo CFG > .venv/pyvenv.cfg; " +
                        Reads({"newfile", ".venv/pyvenv.cfg", "sub/old"}) +
                        "python3 -c 'print(open(\".venv/pyvenv.cfg\").read().strip() + \"-PY\")'; "
                        "sed -n 's/NEW/NEW-SED/p' newfile; ls .venv; echo done");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done"));
  EXPECT_THAT(r.out, HasSubstr("NEW\nNEW\n static:newfile:0\n")) << r.out;  // cat, then the probe
  EXPECT_THAT(r.out, HasSubstr("CFG\nCFG\n static:.venv/pyvenv.cfg:0\n")) << r.out;
  EXPECT_THAT(r.out, HasSubstr("CFG-PY\n"));     // python3's open()
  EXPECT_THAT(r.out, HasSubstr("NEW-SED\n"));    // sed's fopen()
  EXPECT_THAT(r.out, HasSubstr("pyvenv.cfg\n"));  // listed
  // The honest neighbour that existed at launch, granted by the kernel.
  EXPECT_THAT(r.out, HasSubstr("OLD\nOLD\n static:sub/old:0\n"));
  EXPECT_THAT(r.err, Not(HasSubstr(": read "))) << r.err;  // no brokered read refused
}

TEST_P(BrokerTest, TheDeniedPathStaysRefusedThroughTheBroker) {
  RunResult r = Run(DenyEnv(), "echo NEW > newfile; " + Reads({".env", "newfile"}) +
                                   std::string(PROBE_STATIC) + " read .env; echo \"plain:$?\"");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("SECRET")));
  EXPECT_THAT(r.out, HasSubstr(" static:.env:13\n"));  // EACCES, the bit set by hand
  EXPECT_THAT(r.out, HasSubstr("plain:13\n"));
  EXPECT_THAT(r.out, HasSubstr("NEW\n static:newfile:0\n"));
  EXPECT_EQ(ReadFile(t_.Ws(".env")), "SECRET\n");
}

TEST_P(BrokerTest, SymlinksBesideTheCarveOutLeadOnlyWhereTheRulesLetTheToolRead) {
  RunResult r = Run(DenyEnv(), "ln -s .env to-env; ln -s " + Quote(t_.Out("secret")) +
                                   " to-out; ln -s sub/old to-old; ln -s sub to-sub; " +
                                   Reads({"to-env", "to-out", "to-old", "to-sub/old"}) + "echo done");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done"));
  EXPECT_THAT(r.out, Not(HasSubstr("SECRET")));
  EXPECT_THAT(r.out, HasSubstr(" static:to-env:13\n"));
  EXPECT_THAT(r.out, HasSubstr(" static:to-out:13\n"));
  EXPECT_THAT(r.out, HasSubstr("OLD\nOLD\n static:to-old:0\n"));
  EXPECT_THAT(r.out, HasSubstr("OLD\nOLD\n static:to-sub/old:0\n"));
  // The refusal names the rule and the grant that would allow it.
  EXPECT_THAT(r.err, HasSubstr("denied path " + t_.Ws(".env")));
  EXPECT_THAT(r.err, HasSubstr("to allow it: --ro " + t_.Out("secret")));
}

// What comes into being during the run (made here from outside the
// sandbox, where nothing refuses it): a denied path that did not exist at
// launch, another name of the denied file, a deny glob's new match. The
// broker refuses each; a file made beside them is read.
TEST_P(BrokerTest, WhatComesIntoBeingDeniedStaysRefusedThroughTheBroker) {
  WriteFile(t_.Ws("a.pem"), "PEM-AT-LAUNCH\n");
  std::vector<std::string> extra = DenyEnv();
  extra.insert(extra.end(), {"--deny", t_.Ws("later"), "--deny-glob", "*.pem"});
  RunResult r = RunWhile(
      extra,
      [&] {
        WriteFile(t_.Ws("later"), "LATER-SECRET\n");
        ASSERT_EQ(::link(t_.Ws(".env").c_str(), t_.Ws("alias").c_str()), 0);
        WriteFile(t_.Ws("b.pem"), "PEM-LATER\n");
        WriteFile(t_.Ws("honest.txt"), "HONEST\n");
      },
      Reads({"later", "alias", "b.pem", "a.pem", "honest.txt"}) + "echo done");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done"));
  for (const char* secret : {"LATER-SECRET", "SECRET\n", "PEM-LATER", "PEM-AT-LAUNCH"}) {
    EXPECT_THAT(r.out, Not(HasSubstr(secret))) << r.out;
  }
  for (const char* rel : {"later", "alias", "b.pem", "a.pem"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string(" static:") + rel + ":13\n")) << rel;
  }
  EXPECT_THAT(r.out, HasSubstr("HONEST\nHONEST\n static:honest.txt:0\n"));
  EXPECT_THAT(r.out, HasSubstr("EARLY\n"));  // the broker's first read, before
}

TEST_P(BrokerTest, APathNoRuleCoversIsRefusedThroughTheBroker) {
  RunResult r = Run(DenyEnv(), StaticBrokerRead(t_.Out("secret")) + "echo done");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("OUTSIDE-SECRET")));
  EXPECT_THAT(r.out, HasSubstr(":13\ndone"));
}

// freopen, which glibc opens through its own internal open: a stream
// reopened on a file made beside the carve-out reads it (stdin keeps its
// descriptor, 0), in a program built as is (freopen) and with
// _FILE_OFFSET_BITS=64 (freopen64); the denied path stays closed to it.
TEST_P(BrokerTest, AStreamReopenedOnAFileMadeBesideTheCarveOutReadsIt) {
  const std::string script = std::string("echo NEW > newfile; ") +
                             "for p in " LIBC_PROBE " " LIBC_PROBE64
                             "; do "
                             "$p freopen newfile; echo \"freopen:$?\"; "
                             "$p freopen sub/old; echo \"old:$?\"; "
                             "$p freopen .env; echo \"denied:$?\"; done";
  RunResult r = Run(DenyEnv(), script);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string once = "NEW\nfd:0\nfreopen:0\nOLD\nfd:0\nold:0\ndenied:13\n";
  EXPECT_EQ(r.out, once + once) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("SECRET")));
}

// The run records lie in the workspace (its state home does: cordon run
// --workspace ~). They are an unlisted denial: Landlock gives the
// directories on the way down to them no listing right, so a directory
// made there in the run has none either. glibc's opendir (ls, python's
// os.listdir) is asked of the broker, which lists one directory at a time:
// the new ones and those on the way, never the denial, nor the directory
// holding it (its listing would name what Landlock lists nowhere).
TEST_P(BrokerTest, DirectoriesBesideAnUnlistedDenialAreListedOneAtATime) {
  ASSERT_EQ(::mkdir(t_.Ws(".state").c_str(), 0700), 0);
  const std::vector<std::string> env = {"XDG_STATE_HOME=" + t_.Ws(".state")};
  RunResult r = Run({},
                    std::string("mkdir new; echo N > new/f; ") +
                        "ls new; echo \"new:$?\"; " LIBC_PROBE
                        " opendir new; echo \"probe:$?\"; "
                        "python3 -c 'import os; print(os.listdir(\"new\"))'; "
                        "ls -a; echo \"root:$?\"; ls .state; echo \"way:$?\"; "
                        "ls .state/cordon; echo \"holder:$?\"; "
                        "ls .state/cordon/runs; echo \"records:$?\"; "
                        "cat new/f",
                    env);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("f\nnew:0\nf\nprobe:0\n['f']\n")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\nnew\n"));
  EXPECT_THAT(r.out, HasSubstr("root:0\ncordon\nway:0\nholder:2\nrecords:2\nN\n")) << r.err;
  for (const char* name : {"\nruns\n", "journal", "scans"}) {
    EXPECT_THAT(r.out, Not(HasSubstr(name))) << name;
  }
}

// Every decision of the supervisor's is a record in the run's log: a
// brokered read it allowed names the path and the rule, as a refused one
// does, and the chain still verifies.
TEST_P(BrokerTest, AnAllowedBrokeredReadIsInTheAuditLog) {
  const std::string audit = t_.Out("audit.jsonl");
  RunResult r =
      Run({"--deny", t_.Ws(".env"), "--audit", audit},
          "echo NEW > newfile; " + StaticBrokerRead("newfile") + StaticBrokerRead(".env"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("NEW\n static:newfile:0\n static:.env:13\n"));
  const std::string log = ReadFile(audit);
  bool allowed = false, refused = false;
  size_t start = 0;
  for (size_t end; (end = log.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string line = log.substr(start, end - start);
    if (line.find("\"kind\":\"decision\"") == std::string::npos) continue;
    allowed |= line.find("\"result\":\"allowed\"") != std::string::npos &&
               line.find("\"why\":\"read " + t_.Ws("newfile") +
                         ": readable: brokered beside a carve-out\"") != std::string::npos;
    refused |= line.find("\"result\":\"refused\"") != std::string::npos &&
               line.find("\"why\":\"read " + t_.Ws(".env")) != std::string::npos;
  }
  EXPECT_TRUE(allowed) << log;
  EXPECT_TRUE(refused) << log;
  RunResult verify = RunCordon({"audit", "verify", audit});
  EXPECT_EQ(verify.status, 0) << verify.out << verify.err;
}

INSTANTIATE_TEST_SUITE_P(Rungs, BrokerTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "notify_all" : "landlock"; });

// Without a carve-out the kernel's grant is the whole answer: the preload
// is not told to retry (its open hooks stay one tail call), the filter
// does not notify the bit, and a tool that sets it gets a plain open,
// which Landlock decides.
TEST(BrokerRun, ARunWithoutCarveOutsLeavesReadsToTheKernel) {
  ScratchTree t;
  WriteFile(t.Ws("f"), "F\n");
  WriteFile(t.Out("secret"), "OUTSIDE-SECRET\n");
  const std::string script = "echo \"broker:${CORDON_PRELOAD_BROKER:-unset}\"; " +
                             StaticBrokerRead("f") + StaticBrokerRead(t.Out("secret"));
  RunResult plain = RunCordon({"run", "--workspace", t.ws(), "--ro", ProbeDir(), "--profile",
                               "workspace-write", "--", "sh", "-c", script},
                              t.ws());
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_THAT(plain.out, HasSubstr("broker:unset\n"));
  EXPECT_THAT(plain.out, HasSubstr("F\n static:f:0\n"));
  EXPECT_THAT(plain.out, Not(HasSubstr("OUTSIDE-SECRET")));
  EXPECT_THAT(plain.out, HasSubstr(" static:" + t.Out("secret") + ":13\n"));
  RunResult carved = RunCordon({"run", "--workspace", t.ws(), "--ro", ProbeDir(), "--profile",
                                "workspace-write", "--deny", t.Ws(".env"), "--", "sh", "-c", script},
                               t.ws());
  ASSERT_EQ(carved.status, 0) << carved.err;
  EXPECT_THAT(carved.out, HasSubstr("broker:1\n"));
}

// `--rw FILE` of a file that does not exist at launch (a CI step's
// output): Landlock has no rule for it, so once the run made it, it is
// read back through the broker (which looked at the rules before the file
// was there: the first brokered read says ENOENT); a file beside it stays
// unreadable.
TEST(BrokerRun, ARwFileMadeInTheRunIsReadBack) {
  ScratchTree t;
  WriteFile(t.Out("other.md"), "OTHER\n");
  const std::string out = t.Out("summary.md");
  RunResult r = RunCordon({"run", "--workspace", t.ws(), "--ro", ProbeDir(), "--profile",
                           "workspace-write", "--rw", out, "--", "sh", "-c",
                           StaticBrokerRead(out) + "echo SUMMARY >> " + Quote(out) + "; cat " + Quote(out) + "; " +
                               StaticBrokerRead(out) + StaticBrokerRead(t.Out("other.md"))},
                          t.ws());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(out), "SUMMARY\n");
  EXPECT_THAT(r.out, HasSubstr(" static:" + out + ":2\nSUMMARY\nSUMMARY\n static:" + out + ":0\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("OTHER")));
  EXPECT_THAT(r.out, HasSubstr(" static:" + t.Out("other.md") + ":13\n"));
}

// `rm` at the root of a workspace whose root is carved (a repository's
// protected .git/config; --deny) works whatever sensitive.delete relaxes:
// the carved root has no kernel right to remove entries, so the supervisor
// removes them (policy::CarvesWrites). A new file made there and removed,
// and a file of the user's.
TEST(BrokerRun, RmAtTheRootOfACarvedWorkspaceWorks) {
  ScratchTree t;
  ASSERT_EQ(::mkdir(t.Ws(".git").c_str(), 0755), 0);
  WriteFile(t.Ws(".git/config"), "[core]\n");
  WriteFile(t.Ws("top.tmp"), "TOP\n");
  WriteFile(t.Ws("keep.txt"), "KEEP\n");
  WriteFile(t.Out("allow.json"), "{\"sensitive\": {\"delete\": \"allow\"}}\n");
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--policy", t.Out("allow.json")},
        std::vector<std::string>{"--policy", t.Out("allow.json"), "--deny", t.Ws(".env")},
        std::vector<std::string>{"--deny", t.Ws(".env")}}) {
    WriteFile(t.Ws("top.tmp"), "TOP\n");
    std::vector<std::string> args = {"run", "--workspace", t.ws(), "--profile", "workspace-write"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--", "sh", "-c", "echo N > new.tmp && rm new.tmp && rm top.tmp"});
    RunResult r = RunCordon(args, t.ws());
    EXPECT_EQ(r.status, 0) << extra[1] << ": " << r.err;
    EXPECT_FALSE(Exists(t.Ws("top.tmp"))) << extra[1];
    EXPECT_FALSE(Exists(t.Ws("new.tmp"))) << extra[1];
    EXPECT_EQ(ReadFile(t.Ws("keep.txt")), "KEEP\n");
    EXPECT_EQ(ReadFile(t.Ws(".git/config")), "[core]\n");
  }
}

// The limit, said as it is: Landlock checks EXECUTE when a file is
// exec'd, and no broker can answer that, so a program made beside a
// carve-out does not run as itself (126); its interpreter runs it.
TEST(BrokerRun, AProgramMadeBesideACarveOutRunsThroughItsInterpreterOnly) {
  ScratchTree t;
  WriteFile(t.Ws(".env"), "SECRET\n");
  RunResult r = RunCordon({"run", "--workspace", t.ws(), "--profile", "workspace-write", "--deny",
                           t.Ws(".env"), "--", "sh", "-c",
                           "printf '#!/bin/sh\\necho RAN\\n' > s.sh; chmod +x s.sh; ./s.sh; "
                           "echo \"exec:$?\"; sh s.sh"},
                          t.ws());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("exec:126\nRAN\n"));
  // Said at the default log level, with what works instead.
  EXPECT_THAT(r.err, HasSubstr("execve: run " + t.Ws("s.sh")));
  EXPECT_THAT(r.err, HasSubstr("run it through its interpreter (sh " + t.Ws("s.sh") + ")"));
}

}  // namespace
}  // namespace cordon::testing
