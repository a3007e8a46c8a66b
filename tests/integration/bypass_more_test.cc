// Per-operation bypass of a metadata change, a directory rename and a link
// (issue 27 item 1, seed 004), end to end: the real cordon, a forked probe
// (dynamic and static), answers from a rules file, the disk and the audit
// log read afterwards. bypass_test.cc has the open, unlink, rmdir, mkdir
// and file rename.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <future>
#include <string>
#include <thread>

#include "policy/digest.h"
#include "tests/integration/bypass_fixture.h"

namespace cordon::testing {
namespace {

class BypassMoreTest : public BypassFixture {
 protected:
  struct stat Stat(const std::string& rel) {
    struct stat st {};
    EXPECT_EQ(::lstat(t_.Ws(rel).c_str(), &st), 0) << rel;
    return st;
  }
  // The first approval request's preview.
  nlohmann::json Preview() {
    auto a = Approvals();
    return a.empty() ? nlohmann::json::object() : a[0]["preview"];
  }
  // The preview of a chmod of .gitmodules to `args` ("mode 0600"), by path
  // or through a descriptor alike: the operation, the path and its inode,
  // the rule that refused it; then one allowed-once outcome, the log intact.
  void ExpectModulesChmodAllowed(const nlohmann::json& p, const std::string& args) {
    EXPECT_EQ(p["op"], "chmod");
    EXPECT_EQ(p["args"], args);
    EXPECT_EQ(p["path"], ".gitmodules");
    EXPECT_EQ(p["rule"], "protected path");
    EXPECT_EQ(p["ino"], Stat(".gitmodules").st_ino);
    EXPECT_EQ(Outcomes(), std::vector<std::string>{"allowed-once"});
    EXPECT_EQ(RunCordon({"audit", "verify", log_}).status, 0);
  }
};

// chmod of a protected path, allowed once for exactly that mode: the mode
// is set, the preview carries it, the log says bypassed. The same rule
// answers no other mode; without allowBypass or an approver nobody is
// asked; an honest file beside it needs no ask.
TEST_P(BypassMoreTest, AChmodOfAProtectedPathForExactlyThatMode) {
  ASSERT_EQ(::chmod(t_.Ws(".gitmodules").c_str(), 0644), 0);
  const std::string allow =
      Rules(R"([{"glob": ".gitmodules", "op": "bypass-chmod", "args": "mode 0600"}])");
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "chmod", ".gitmodules", "600"}), 0) << last_.err;
  EXPECT_EQ(Stat(".gitmodules").st_mode & 07777, 0600u);
  EXPECT_EQ(Decisions("bypassed"), 1);
  const nlohmann::json p = Preview();
  EXPECT_EQ(p["kind"], "bypass");
  ExpectModulesChmodAllowed(p, "mode 0600");
  // Another mode: the rule's answer is for 0600 only.
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "chmod", ".gitmodules", "666"}), EACCES) << last_.err;
  EXPECT_EQ(Stat(".gitmodules").st_mode & 07777, 0600u);
  EXPECT_EQ(Preview()["args"], "mode 0666");
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"denied"});
  EXPECT_EQ(Decisions("bypassed"), 0);
  // Nobody asked without allowBypass, nor under --approvals deny.
  EXPECT_EQ(Run(kWrite, allow, {"sys", "chmod", ".gitmodules", "600"}), EACCES) << last_.err;
  EXPECT_TRUE(Approvals().empty());
  EXPECT_EQ(Run(kWriteBypass, "deny", {"sys", "chmod", ".gitmodules", "644"}), EACCES) << last_.err;
  EXPECT_TRUE(Approvals().empty());
  EXPECT_EQ(Stat(".gitmodules").st_mode & 07777, 0600u);
  // Set-id bits are never offered (the emulation refuses them anyway).
  const std::string any = Rules(R"([{"glob": ".gitmodules", "op": "bypass"}])");
  EXPECT_EQ(Run(kWriteBypass, any, {"sys", "chmod", ".gitmodules", "4755"}), EACCES) << last_.err;
  EXPECT_TRUE(Approvals().empty());
  EXPECT_EQ(Stat(".gitmodules").st_mode & 07777, 0600u);
  // The honest neighbour.
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "chmod", "notes.txt", "600"}), 0) << last_.err;
  EXPECT_EQ(Stat("notes.txt").st_mode & 07777, 0600u);
  EXPECT_TRUE(Approvals().empty());
}

// The fd forms (fchmod, futimens, fsetxattr) of a protected path: offered
// as the path forms are, with the same preview (the path the descriptor
// leads to), performed once allowed, refused when denied; without
// allowBypass nobody is asked.
TEST_P(BypassMoreTest, AnFchmodOfAProtectedPath) {
  ASSERT_EQ(::chmod(t_.Ws(".gitmodules").c_str(), 0644), 0);
  const std::string allow = Rules(R"([{"glob": ".gitmodules", "op": "bypass-chmod",
      "args": "mode 0600"}, {"glob": ".gitmodules", "op": "bypass-utimes"}])");
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "fchmod", ".gitmodules", "600"}), 0) << last_.err;
  EXPECT_EQ(Stat(".gitmodules").st_mode & 07777, 0600u);
  EXPECT_EQ(Decisions("bypassed"), 1);
  nlohmann::json p = Preview();
  ExpectModulesChmodAllowed(p, "mode 0600");
  // Denied (the rule is for 0600 only): refused, unchanged.
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "fchmod", ".gitmodules", "644"}), EACCES)
      << last_.err;
  EXPECT_EQ(Stat(".gitmodules").st_mode & 07777, 0600u);
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"denied"});
  EXPECT_EQ(Decisions("bypassed"), 0);
  // Without allowBypass: no request.
  EXPECT_EQ(Run(kWrite, allow, {"sys", "fchmod", ".gitmodules", "600"}), EACCES) << last_.err;
  EXPECT_TRUE(Approvals().empty());
  // futimens (utimensat with a NULL path): its times in the preview.
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "futimens", ".gitmodules", "1000000000", "omit"}), 0)
      << last_.err;
  EXPECT_EQ(Stat(".gitmodules").st_atim.tv_sec, 1000000000);
  EXPECT_EQ(Preview()["args"], "atime 1000000000.000000000 mtime UTIME_OMIT");
  EXPECT_EQ(Decisions("bypassed"), 1);
  // fsetxattr: another op, which the rules do not answer.
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "fsetxattr", ".gitmodules", "user.k", "v"}), EACCES)
      << last_.err;
  EXPECT_EQ(Preview()["op"], "xattr");
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"denied"});
  // The honest neighbour: nobody asked.
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "fchmod", "notes.txt", "600"}), 0) << last_.err;
  EXPECT_EQ(Stat("notes.txt").st_mode & 07777, 0600u);
  EXPECT_TRUE(Approvals().empty());
  // A read-only path: the descriptor's path refused by the rule lookup.
  ASSERT_EQ(::mkdir(t_.Ws("ro").c_str(), 0755), 0);
  WriteFile(t_.Ws("ro/f"), "f\n");
  ASSERT_EQ(::chmod(t_.Ws("ro/f").c_str(), 0644), 0);
  const std::string ro = Rules(R"([{"glob": "ro/f", "op": "bypass-chmod"}])");
  EXPECT_EQ(Run(kWriteBypass, ro, {"sys", "fchmod", "ro/f", "600"}, {}, {"--ro", t_.Ws("ro")}), 0)
      << last_.err;
  EXPECT_EQ(Stat("ro/f").st_mode & 07777, 0600u);
  EXPECT_EQ(Preview()["rule"], "read-only path");
  EXPECT_EQ(Preview()["path"], "ro/f");
  EXPECT_EQ(Decisions("bypassed"), 1);
}

// A directory's mode inside a read-only path: offered as a file's. A
// change through a symbolic link, and one of a hard-linked file, are never
// asked.
TEST_P(BypassMoreTest, ADirectoryYesALinkOrAHardLinkedFileNever) {
  ASSERT_EQ(::mkdir(t_.Ws("ro").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(t_.Ws("ro/d").c_str(), 0755), 0);
  WriteFile(t_.Ws("ro/f"), "f\n");
  ASSERT_EQ(::link(t_.Ws("ro/f").c_str(), t_.Ws("ro/f2").c_str()), 0);
  ASSERT_EQ(::symlink(".gitmodules", t_.Ws("lnk").c_str()), 0);
  const std::string allow = Rules(R"([{"glob": "ro/*", "op": "bypass-chmod"},
      {"glob": "lnk", "op": "bypass"}, {"glob": ".gitmodules", "op": "bypass"}])");
  const std::vector<std::string> ro = {"--ro", t_.Ws("ro")};
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "chmod", "ro/d", "700"}, {}, ro), 0) << last_.err;
  EXPECT_EQ(Stat("ro/d").st_mode & 07777, 0700u);
  EXPECT_EQ(Preview()["directory"], nullptr) << "a rename's key only";
  EXPECT_EQ(Preview()["args"], "mode 0700");
  EXPECT_EQ(Decisions("bypassed"), 1);
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "chmod", "ro/f", "600"}, {}, ro), EACCES) << last_.err;
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "chmod", "lnk", "600"}, {}, ro), EACCES) << last_.err;
  EXPECT_TRUE(Approvals().empty());
  EXPECT_EQ(Stat("ro/f").st_mode & 07777, 0644u);
  EXPECT_EQ(Stat(".gitmodules").st_mode & 07777, 0644u);
}

// utimensat of a deny glob's match: both timestamps in the preview
// (UTIME_OMIT by name); an answer for another time is refused.
TEST_P(BypassMoreTest, TimesOfADenyGlobMatchForExactlyThoseTimes) {
  const std::string allow = Rules(R"([{"glob": "key.pem", "op": "bypass-utimes",
      "args": "atime 1000000000.000000000 mtime UTIME_OMIT"}])");
  const struct stat before = Stat("key.pem");
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "utimensat", "key.pem", "1000000000", "omit"}), 0)
      << last_.err;
  struct stat st = Stat("key.pem");
  EXPECT_EQ(st.st_atim.tv_sec, 1000000000);
  EXPECT_EQ(st.st_mtim.tv_sec, before.st_mtim.tv_sec) << "UTIME_OMIT";
  EXPECT_EQ(Preview()["op"], "utimes");
  EXPECT_EQ(Preview()["rule"], "denied path") << "a match at launch is a denied path";
  EXPECT_EQ(Decisions("bypassed"), 1);
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "utimensat", "key.pem", "2000000000", "omit"}), EACCES)
      << last_.err;
  EXPECT_EQ(Stat("key.pem").st_atim.tv_sec, 1000000000);
  EXPECT_EQ(Preview()["args"], "atime 2000000000.000000000 mtime UTIME_OMIT");
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"denied"});
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "utimensat", "key.pem", "now", "now"}), EACCES);
  EXPECT_EQ(Preview()["args"], "atime UTIME_NOW mtime UTIME_NOW");
  EXPECT_EQ(Stat("key.pem").st_atim.tv_sec, 1000000000);
}

// chown and xattrs of a path the user denied: the owner asked for, the
// xattr's name and its value's SHA-256 in the preview; another owner or
// value is another answer.
TEST_P(BypassMoreTest, AnOwnerAndAnXattrOfAUserDeniedPath) {
  ASSERT_EQ(::mkdir(t_.Ws("secret").c_str(), 0755), 0);
  WriteFile(t_.Ws("secret/token"), "t\n");
  if (::setxattr(t_.Ws("secret/token").c_str(), "user.probe", "x", 1, 0) != 0) {
    GTEST_SKIP() << "no user xattrs here";
  }
  ASSERT_EQ(::removexattr(t_.Ws("secret/token").c_str(), "user.probe"), 0);
  const std::string gid = std::to_string(::getgid());
  const std::string value_rule = "set user.k sha256=" + policy::Sha256Hex("v1") + " size=2 flags=0";
  const std::string allow = Rules(R"([{"glob": "secret/token", "op": "bypass-chown",
      "args": "owner -1:)" + gid + R"("}, {"glob": "secret/token", "op": "bypass-xattr",
      "args": ")" + value_rule + R"("}, {"glob": "secret/token", "op": "bypass-xattr",
      "args": "remove user.k"}])");
  const std::vector<std::string> deny = {"--deny", t_.Ws("secret")};
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "chown", "secret/token", "-1", gid}, {}, deny), 0)
      << last_.err;
  EXPECT_EQ(Preview()["args"], "owner -1:" + gid);
  EXPECT_EQ(Preview()["rule"], "denied path");
  EXPECT_EQ(Decisions("bypassed"), 1);
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "chown", "secret/token", gid, "-1"}, {}, deny), EACCES)
      << last_.err;
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"denied"});
  // An xattr: the value approved is the value set.
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "setxattr", "secret/token", "user.k", "v1"}, {}, deny),
            0)
      << last_.err;
  char buf[16] = {};
  EXPECT_EQ(::getxattr(t_.Ws("secret/token").c_str(), "user.k", buf, sizeof buf), 2);
  EXPECT_STREQ(buf, "v1");
  EXPECT_EQ(Preview()["args"], value_rule);
  EXPECT_EQ(Decisions("bypassed"), 1);
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "setxattr", "secret/token", "user.k", "v2"}, {}, deny),
            EACCES)
      << last_.err;
  EXPECT_EQ(::getxattr(t_.Ws("secret/token").c_str(), "user.k", buf, sizeof buf), 2);
  EXPECT_STREQ(buf, "v1");
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"denied"});
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "removexattr", "secret/token", "user.k"}, {}, deny), 0)
      << last_.err;
  EXPECT_LT(::getxattr(t_.Ws("secret/token").c_str(), "user.k", buf, sizeof buf), 0);
  EXPECT_EQ(Decisions("bypassed"), 1);
}

// The built-in credential list, outside the workspace, a raw "..": never
// offered for a metadata change.
TEST_P(BypassMoreTest, MetadataOfACredentialOrOutsidePathIsNeverAsked) {
  ASSERT_EQ(::mkdir(t_.Ws(".ssh").c_str(), 0700), 0);
  WriteFile(t_.Ws(".ssh/config"), "Host *\n");
  ASSERT_EQ(::chmod(t_.Ws(".ssh/config").c_str(), 0600), 0);
  WriteFile(t_.Out("elsewhere.txt"), "elsewhere\n");
  ASSERT_EQ(::chmod(t_.Out("elsewhere.txt").c_str(), 0644), 0);
  const std::string allow = Rules(R"([{"glob": "*", "op": "bypass"},
      {"glob": "*/*", "op": "bypass"}, {"glob": ".*", "op": "bypass"}, {"glob": ".*/*", "op": "bypass"}])");
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "chmod", ".ssh/config", "644"}, {"HOME=" + t_.ws()}),
            EACCES)
      << last_.err;
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "chmod", t_.Out("elsewhere.txt"), "600"}), EACCES)
      << last_.err;
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "chmod", "../ws/.gitmodules", "600"}), EACCES)
      << last_.err;
  EXPECT_TRUE(Approvals().empty());
  struct stat st {};
  ASSERT_EQ(::stat(t_.Out("elsewhere.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  EXPECT_EQ(Stat(".ssh/config").st_mode & 07777, 0600u);
}

// A directory renamed out of a read-only path, to a free name: the
// preview says it is a directory and names both ends; its entries move
// with it. A directory with a rule beneath it, one moved over another
// directory, an exchange and a move out of the workspace are never asked;
// an answer for another operation moves nothing; an honest rename needs
// no ask.
TEST_P(BypassMoreTest, ADirectoryRename) {
  for (const char* d : {"ro", "ro/sub", "ro/held", "ro/held/secret", "ro/full", "ro/empty", "a"}) {
    ASSERT_EQ(::mkdir(t_.Ws(d).c_str(), 0755), 0) << d;
  }
  WriteFile(t_.Ws("ro/sub/f"), "f\n");
  const uint64_t ino = Stat("ro/sub").st_ino;
  const std::string allow = Rules(R"([{"glob": "ro/*", "op": "bypass-rename"}])");
  const std::vector<std::string> ro = {"--ro", t_.Ws("ro"), "--deny", t_.Ws("ro/held/secret")};
  EXPECT_EQ(Run(kWriteBypass, allow, {"rename", "ro/sub", "ro/moved"}, {}, ro), 0) << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("ro/sub")));
  EXPECT_EQ(ReadFile(t_.Ws("ro/moved/f")), "f\n");
  EXPECT_EQ(Stat("ro/moved").st_ino, ino);
  EXPECT_EQ(Decisions("bypassed"), 1);
  const nlohmann::json p = Preview();
  EXPECT_EQ(p["op"], "rename");
  EXPECT_EQ(p["directory"], true);
  EXPECT_EQ(p["path"], "ro/sub");
  EXPECT_EQ(p["ino"], ino);
  EXPECT_EQ(p["to"]["path"], "ro/moved");
  EXPECT_EQ(p["to"]["ino"], 0);
  EXPECT_EQ(p["rule"], "read-only path");
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"allowed-once"});
  EXPECT_EQ(RunCordon({"audit", "verify", log_}).status, 0);
  // Never asked: a rule beneath it, over a directory, an exchange, out of
  // the workspace.
  EXPECT_EQ(Run(kWriteBypass, allow, {"rename", "ro/held", "ro/held2"}, {}, ro), EACCES)
      << last_.err;
  EXPECT_EQ(Run(kWriteBypass, allow, {"rename", "ro/full", "ro/empty"}, {}, ro), EACCES)
      << last_.err;
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "rename", "ro/full", "ro/empty", "exchange"}, {}, ro),
            EACCES)
      << last_.err;
  EXPECT_EQ(Run(kWriteBypass, allow, {"rename", "ro/full", t_.Out("full")}, {}, ro), EACCES)
      << last_.err;
  EXPECT_TRUE(Approvals().empty());
  EXPECT_TRUE(Exists(t_.Ws("ro/held/secret")));
  EXPECT_TRUE(Exists(t_.Ws("ro/full")));
  EXPECT_TRUE(Exists(t_.Ws("ro/empty")));
  EXPECT_FALSE(Exists(t_.Out("full")));
  // An answer for another operation (a mkdir's) moves nothing.
  const std::string other = Rules(R"([{"glob": "ro/*", "op": "bypass-mkdir"}])");
  EXPECT_EQ(Run(kWriteBypass, other, {"rename", "ro/full", "ro/gone"}, {}, ro), EACCES)
      << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("ro/full")));
  EXPECT_FALSE(Exists(t_.Ws("ro/gone")));
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"denied"});
  EXPECT_EQ(Decisions("bypassed"), 0);
  // The honest neighbour.
  EXPECT_EQ(Run(kWriteBypass, allow, {"rename", "a", "b"}, {}, ro), 0) << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("b")));
  EXPECT_TRUE(Approvals().empty());
}

// A link: a new name a deny glob refuses, for a file the tool may write,
// allowed once: both names are one inode; the preview names both. The
// file then has two names and is a hard-linked file: a later write to it
// is refused. A denied source is never asked (a second, readable name of
// a denied file); an answer for another name links nothing; an honest
// link needs no ask.
TEST_P(BypassMoreTest, ALinkToARefusedNewName) {
  ASSERT_EQ(::mkdir(t_.Ws("secret").c_str(), 0755), 0);
  WriteFile(t_.Ws("secret/token"), "t\n");
  const std::string allow = Rules(R"([{"glob": "notes*", "op": "bypass-link"}])");
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "link", "notes.txt", "notes.pem"}), 0) << last_.err;
  EXPECT_EQ(Stat("notes.pem").st_ino, Stat("notes.txt").st_ino);
  EXPECT_EQ(Stat("notes.txt").st_nlink, 2u);
  EXPECT_EQ(Decisions("bypassed"), 1);
  const nlohmann::json p = Preview();
  EXPECT_EQ(p["op"], "link");
  EXPECT_EQ(p["path"], "notes.txt");
  EXPECT_EQ(p["to"]["path"], "notes.pem");
  EXPECT_EQ(p["to"]["ino"], 0);
  EXPECT_EQ(p["rule"], "matches a deny glob");
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"allowed-once"});
  EXPECT_EQ(RunCordon({"audit", "verify", log_}).status, 0);
  // Hard-linked now: a write through either name is refused.
  EXPECT_EQ(Run(kWriteBypass, allow, {"append", "notes.txt"}), EACCES) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("notes.txt")), "notes\n");
  // Another name: the rule does not cover it.
  WriteFile(t_.Ws("free.txt"), "free\n");
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "link", "free.txt", "other2.pem"}), EACCES)
      << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("other2.pem")));
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"denied"});
  EXPECT_EQ(Decisions("bypassed"), 0);
  // A denied source is never asked, nor a credential name, nor without allowBypass.
  const std::string any = Rules(R"([{"glob": "*", "op": "bypass"}, {"glob": "*/*", "op": "bypass"},
      {"glob": ".*/*", "op": "bypass"}])");
  EXPECT_EQ(Run(kWriteBypass, any, {"sys", "link", "secret/token", "token.pem"}, {},
                {"--deny", t_.Ws("secret")}),
            EACCES)
      << last_.err;
  ASSERT_EQ(::mkdir(t_.Ws(".ssh").c_str(), 0700), 0);
  EXPECT_EQ(Run(kWriteBypass, any, {"sys", "link", "free.txt", ".ssh/k"}, {"HOME=" + t_.ws()}),
            EACCES)
      << last_.err;
  EXPECT_EQ(Run(kWrite, any, {"sys", "link", "free.txt", "free.pem"}), EACCES) << last_.err;
  EXPECT_TRUE(Approvals().empty());
  EXPECT_FALSE(Exists(t_.Ws("token.pem")));
  EXPECT_FALSE(Exists(t_.Ws("free.pem")));
  EXPECT_FALSE(Exists(t_.Ws(".ssh/k")));
  // The honest neighbour.
  EXPECT_EQ(Run(kWriteBypass, any, {"sys", "link", "free.txt", "free2.txt"}), 0) << last_.err;
  EXPECT_EQ(Stat("free2.txt").st_ino, Stat("free.txt").st_ino);
  EXPECT_TRUE(Approvals().empty());
}

INSTANTIATE_TEST_SUITE_P(Probes, BypassMoreTest, ::testing::Values(PROBE_DYNAMIC, PROBE_STATIC),
                         ProbeKindName);

// Through the real policyd and `cordon approve`: a chmod's preview, with
// its arguments, travels to the host and back; the digest answered is the
// one that grants, and the mode set is the one shown.
TEST(BypassMoreSocketTest, AChmodAnsweredThroughPolicyd) {
  using namespace std::chrono_literals;
  ScratchTree t;
  WriteFile(t.Ws(".gitmodules"), kModules);
  ASSERT_EQ(::chmod(t.Ws(".gitmodules").c_str(), 0644), 0);
  const std::string sock = t.root() + "/policyd.sock", policy = t.root() + "/policy.json";
  WriteFile(policy, kWriteBypass);
  PolicyDaemon daemon(sock);
  ASSERT_TRUE(daemon.up()) << "policyd did not come up";
  std::vector<std::string> a = {
      "run",        "--workspace", t.ws(),           "--ro",        ProbeDir(), "--policy",
      policy,       "--approvals", "socket:" + sock, "--audit",     "none",     "--",
      PROBE_STATIC, "sys",         "chmod",          ".gitmodules", "600"};
  auto run = std::async(std::launch::async, [a] { return RunCordon(a); });
  nlohmann::json req = nlohmann::json::object();
  for (int i = 0; i < 1000 && req.empty(); ++i) {
    auto l = JsonLines(RunCordon({"approve", "--socket", sock, "--list"}).out);
    if (!l.empty())
      req = l[0];
    else
      std::this_thread::sleep_for(10ms);
  }
  ASSERT_FALSE(req.empty()) << "no request arrived";
  EXPECT_EQ(req["preview"]["op"], "chmod");
  EXPECT_EQ(req["preview"]["args"], "mode 0600");
  EXPECT_EQ(RunCordon({"approve", "--socket", sock, "--allow",
                       std::to_string(req["id"].get<uint64_t>()), "--digest", req["digest"]})
                .status,
            0);
  RunResult r = run.get();
  EXPECT_EQ(r.status, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::stat(t.Ws(".gitmodules").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

}  // namespace
}  // namespace cordon::testing
