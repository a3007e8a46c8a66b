// Tool paths, read + execute (issue 24, item 1): in a fake HOME holding a
// pyenv shim chain, an nvm node, a ~/.local/bin console script, a
// ~/.cargo/bin binary and a runner's toolcache entry, each runs under plain
// `cordon run` and under `sh -c` as the same program it is outside; none of
// their roots is writable; the rest of the home stays unreadable; bad PATH
// entries are named and grant nothing. Real cordon, real python3.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

void Script(const std::string& path, const std::string& body) {
  WriteFile(path, body);
  ASSERT_EQ(::chmod(path.c_str(), 0755), 0);
}

void Mkdirs(const std::string& path) {
  ASSERT_EQ(std::system(("mkdir -p '" + path + "'").c_str()), 0);
}

class ToolRootsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_ = t_.Out("home");
    tc_ = t_.Out("toolcache");
    const std::string py = h_ + "/.pyenv";
    Mkdirs(py + "/shims");
    Mkdirs(py + "/libexec");
    Mkdirs(py + "/versions/3.99/bin");
    Script(py + "/shims/python3",
           "#!/bin/sh\nexec \"" + py + "/libexec/pyenv\" exec python3 \"$@\"\n");
    Script(py + "/libexec/pyenv",
           "#!/bin/sh\nshift; p=$1; shift\nexec \"" + py + "/versions/3.99/bin/$p\" \"$@\"\n");
    ASSERT_EQ(::symlink("/usr/bin/python3", (py + "/versions/3.99/bin/python3").c_str()), 0);
    const std::string nvm = h_ + "/.nvm/versions/node/v99.0.0";
    Mkdirs(nvm + "/bin");
    Mkdirs(nvm + "/lib");
    WriteFile(nvm + "/lib/marker", "nvm node v99\n");
    Script(nvm + "/bin/node", "#!/bin/sh\ncat \"" + nvm + "/lib/marker\"\n");
    Mkdirs(h_ + "/.local/bin");
    Mkdirs(h_ + "/.local/lib/cordon");
    Mkdirs(h_ + "/.local/share");
    WriteFile(h_ + "/.local/lib/cordon/hello_mod.py", "WHO = 'console script'\n");
    Script(h_ + "/.local/bin/hello",
           "#!/usr/bin/env python3\nimport sys\nsys.path.insert(0, '" + h_ +
               "/.local/lib/cordon')\nimport hello_mod\nprint(hello_mod.WHO, sys.executable)\n");
    Mkdirs(h_ + "/.cargo/bin");
    Mkdirs(h_ + "/.rustup/toolchains/stable");
    ASSERT_EQ(std::system(("cp /bin/cat '" + h_ + "/.cargo/bin/cargo-cat'").c_str()), 0);
    WriteFile(h_ + "/.rustup/toolchains/stable/marker", "rustup stable\n");
    const std::string go = tc_ + "/gotool/1.2.3/x64";
    Mkdirs(go + "/bin");
    WriteFile(go + "/VERSION", "gotool 1.2.3\n");
    Script(go + "/bin/gotool", "#!/bin/sh\ncat \"" + go + "/VERSION\"\n");
    WriteFile(h_ + "/secret.txt", "CANARY-HOME\n");
    WriteFile(h_ + "/.local/share/secret.txt", "CANARY-SHARE\n");
    path_ = h_ + "/.pyenv/shims:" + nvm + "/bin:" + h_ + "/.local/bin:" + h_ + "/.cargo/bin:" +
            go + "/bin:/usr/bin:/bin";
  }
  std::vector<std::string> Env(const std::string& path = "") const {
    return {"HOME=" + h_, "PATH=" + (path.empty() ? path_ : path), "RUNNER_TOOL_CACHE=" + tc_};
  }
  // CMD outside any sandbox, with the same environment.
  std::string Outside(const std::string& cmd) const {
    std::string line = "cd '" + t_.ws() + "' && env HOME='" + h_ + "' PATH='" + path_ +
                       "' sh -c '" + cmd + "'";
    FILE* f = ::popen(line.c_str(), "r");
    std::string out;
    char buf[512];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    ::pclose(f);
    return out;
  }
  RunResult Run(const std::vector<std::string>& cmd, const std::vector<std::string>& extra = {},
                const std::string& path = "") {
    std::vector<std::string> args = {"run", "--profile", "workspace-write", "--workspace", t_.ws()};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back("--");
    args.insert(args.end(), cmd.begin(), cmd.end());
    return RunCordon(args, "", Env(path));
  }
  std::vector<std::string> Commands() const {
    return {"python3 -c \"import sys; print(sys.executable)\"", "node", "hello",
            "cargo-cat " + h_ + "/.rustup/toolchains/stable/marker", "gotool"};
  }
  ScratchTree t_;
  std::string h_, tc_, path_;
};

TEST_F(ToolRootsTest, EachToolRunsAsTheSameProgramAsOutside) {
  for (const std::string& cmd : Commands()) {
    const std::string want = Outside(cmd);
    ASSERT_FALSE(want.empty()) << cmd;
    RunResult r = Run({"sh", "-c", cmd});
    EXPECT_EQ(r.status, 0) << cmd << "\n" << r.err;
    EXPECT_EQ(r.out, want) << cmd << "\n" << r.err;
  }
  EXPECT_THAT(Outside(Commands()[0]), HasSubstr("/.pyenv/versions/3.99/bin/python3"));
}

TEST_F(ToolRootsTest, PlainRunOfEachCommand) {
  RunResult py = Run({"python3", "-c", "import sys; print(sys.executable)"});
  EXPECT_EQ(py.status, 0) << py.err;
  EXPECT_EQ(py.out, h_ + "/.pyenv/versions/3.99/bin/python3\n");
  for (const char* c : {"node", "hello", "gotool"}) {
    RunResult r = Run({c});
    EXPECT_EQ(r.status, 0) << c << "\n" << r.err;
    EXPECT_EQ(r.out, Outside(c)) << c;
  }
}

TEST_F(ToolRootsTest, AToolchainsOwnVariableFindsItWhereverHomeIs) {
  // A container or CI job whose HOME is not where pyenv was installed: the
  // shim's toolchain is found by PYENV_ROOT, not by HOME.
  const std::string other = t_.Out("other-home");
  ASSERT_EQ(::mkdir(other.c_str(), 0755), 0);
  auto run = [&](const std::string& pyenv_root) {
    return RunCordon({"run", "--workspace", t_.ws(), "--", "python3", "-c",
                      "import sys; print(sys.executable)"},
                     "",
                     {"HOME=" + other, "PATH=" + path_, "RUNNER_TOOL_CACHE=" + tc_,
                      "PYENV_ROOT=" + pyenv_root});
  };
  RunResult r = run(h_ + "/.pyenv");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, h_ + "/.pyenv/versions/3.99/bin/python3\n");
  // The control: the variable naming nothing, the shim's libexec is out of reach.
  RunResult none = run(t_.Out("no-such-dir"));
  EXPECT_NE(none.status, 0);
  EXPECT_THAT(none.err, HasSubstr("libexec/pyenv"));
}

TEST_F(ToolRootsTest, NoRootIsWritableAndTheRestOfTheHomeStaysUnreadable) {
  const std::vector<std::string> roots = {
      h_ + "/.pyenv", h_ + "/.pyenv/versions/3.99", h_ + "/.nvm/versions/node/v99.0.0",
      h_ + "/.local/bin", h_ + "/.local/lib", h_ + "/.cargo", h_ + "/.rustup",
      tc_ + "/gotool/1.2.3/x64"};
  std::string cmd;
  for (const auto& r : roots) cmd += "echo x > '" + r + "/w' 2>/dev/null; ";
  cmd += "cat '" + h_ + "/secret.txt' '" + h_ + "/.local/share/secret.txt'; python3 -c 'print(7)'";
  RunResult r = Run({"sh", "-c", cmd});
  EXPECT_EQ(r.out, "7\n") << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("CANARY")));
  for (const auto& root : roots) EXPECT_FALSE(Exists(root + "/w")) << root;
}

// The private HOME reaches a root through a link the run made (~/.cargo):
// a write through it (cargo's lock, ~/.cargo/.package-cache) is decided
// for the root's own file, refused with the grant that allows it, and
// following that hint gets exactly that file written there. A link the
// tool replaced with a directory of its own is its own directory.
TEST_F(ToolRootsTest, AWriteThroughThePrivateHomeIsDecidedForWhereItLeads) {
  const std::string lock = h_ + "/.cargo/.package-cache";
  const std::string cmd = "echo x > ~/.cargo/.package-cache && echo written";
  RunResult r = Run({"sh", "-c", cmd});
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.err, HasSubstr("to allow it: --rw " + lock)) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("symlink on the way")));
  EXPECT_FALSE(Exists(lock));
  r = Run({"sh", "-c", cmd + "; echo y > ~/.cargo/other 2>/dev/null || echo refused"},
          {"--rw", lock});
  EXPECT_EQ(r.out, "written\nrefused\n") << r.err;
  EXPECT_EQ(ReadFile(lock), "x\n");
  EXPECT_FALSE(Exists(h_ + "/.cargo/other"));
  r = Run(
      {"sh", "-c", "rm ~/.cargo && mkdir ~/.cargo && echo z > ~/.cargo/own && cat ~/.cargo/own"});
  EXPECT_EQ(r.out, "z\n") << r.err;
  EXPECT_FALSE(Exists(h_ + "/.cargo/own"));
}

// What the caller's environment names for its tools to read (a company CA
// under HOME, pip's local wheels) is readable, not writable; the rest of
// the home is not, and a variable that names a credential grants nothing.
TEST_F(ToolRootsTest, WhatTheToolsVariablesNameIsReadOnly) {
  Mkdirs(h_ + "/certs");
  Mkdirs(tc_ + "/wheels");
  Mkdirs(h_ + "/.ssh");
  WriteFile(h_ + "/certs/corp.pem", "CORP-CA\n");
  WriteFile(tc_ + "/wheels/pkg-1.0-py3-none-any.whl", "WHEEL\n");
  WriteFile(h_ + "/.ssh/id_ed25519", "CANARY-KEY\n");
  std::vector<std::string> env = Env();
  env.push_back("NODE_EXTRA_CA_CERTS=" + h_ + "/certs/corp.pem");
  env.push_back("PIP_FIND_LINKS=file://" + tc_ + "/wheels https://example.org/simple");
  env.push_back("SSL_CERT_FILE=" + h_ + "/.ssh/id_ed25519");
  RunResult r = RunCordon(
      {"run", "--profile", "workspace-write", "--workspace", t_.ws(), "--", "sh", "-c",
       "cat \"$NODE_EXTRA_CA_CERTS\"; ls " + tc_ + "/wheels; cat \"$SSL_CERT_FILE\" " + h_ +
           "/secret.txt 2>/dev/null; echo x > \"$NODE_EXTRA_CA_CERTS\" || echo refused"},
      "", env);
  EXPECT_EQ(r.out, "CORP-CA\npkg-1.0-py3-none-any.whl\nrefused\n") << r.err;
  EXPECT_EQ(ReadFile(h_ + "/certs/corp.pem"), "CORP-CA\n");
  RunResult explain = RunCordon({"policy", "explain", "--workspace", t_.ws()}, "", env);
  EXPECT_THAT(explain.out, ::testing::ContainsRegex("read-only +" + h_ +
                                                    "/certs/corp.pem\n +\\(named by "
                                                    "\\$NODE_EXTRA_CA_CERTS\\)"))
      << explain.out;
}

TEST_F(ToolRootsTest, ExplainListsEachGrantWithItsReason) {
  const std::string policy = t_.root() + "/p.json";
  WriteFile(policy, "{}");
  RunResult r = RunCordon({"policy", "explain", policy, "--workspace", t_.ws()}, "", Env());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("toolchain root (pyenv) of PATH entry " + h_ + "/.pyenv/shims"));
  EXPECT_THAT(r.out, HasSubstr("toolchain root (cargo) of PATH entry"));
  EXPECT_THAT(r.out, HasSubstr(tc_ + "/gotool/1.2.3/x64\n"));
  EXPECT_THAT(r.out, Not(HasSubstr(h_ + "/.local/share\n")));
}

TEST_F(ToolRootsTest, BadPathEntriesAreNamedAndGrantNothing) {
  Mkdirs(h_ + "/loops");
  ASSERT_EQ(::symlink((h_ + "/loopdir2").c_str(), (h_ + "/loopdir").c_str()), 0);
  ASSERT_EQ(::symlink((h_ + "/loopdir").c_str(), (h_ + "/loopdir2").c_str()), 0);
  ASSERT_EQ(::symlink("py2", (h_ + "/loops/py").c_str()), 0);
  ASSERT_EQ(::symlink("py", (h_ + "/loops/py2").c_str()), 0);
  WriteFile(t_.Out("cwdfile"), "CANARY-CWD\n");
  const std::string path = h_ + "/secret.txt:" + h_ + "/loopdir:" + h_ + ":.::" + h_ +
                           "/loops:/usr/bin:/bin";
  RunResult r = RunCordon({"run", "--workspace", t_.ws(), "--", "sh", "-c",
                           "cat '" + h_ + "/secret.txt' '" + t_.Out("cwdfile") + "'; echo ran"},
                          t_.outside(), Env(path));
  EXPECT_EQ(r.out, "ran\n") << r.err;
  EXPECT_THAT(r.err, HasSubstr("PATH entry " + h_ + "/secret.txt is not a directory"));
  EXPECT_THAT(r.err, HasSubstr("PATH entry " + h_ + "/loopdir is a symlink loop"));
  EXPECT_THAT(r.err, HasSubstr("PATH entry " + h_ + " is the home directory itself"));
  RunResult loop = RunCordon({"run", "--workspace", t_.ws(), "--", "py"}, "", Env(path));
  EXPECT_EQ(loop.status, 127) << loop.err;
  EXPECT_THAT(loop.err, HasSubstr(h_ + "/loops/py is a symlink loop"));
}

TEST_F(ToolRootsTest, AUsersDenialOfARootWins) {
  RunResult r = Run({"sh", "-c", "python3 -c 'import sys; print(sys.executable)'"},
                    {"--deny", h_ + "/.pyenv"});
  // Python names the first python3 on PATH, the shim, whichever ran.
  EXPECT_THAT(r.out, Not(HasSubstr("versions/3.99"))) << r.err;
}

}  // namespace
}  // namespace cordon::testing
