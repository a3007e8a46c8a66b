// Issue 24 item 4, "credentials stay out, whatever else is granted": under a
// temporary HOME holding a canary in each credential path of the built-in
// deny list (supervisor/load/credentials.cc), no canary is readable by a
// dynamic tool (cat, through the preload) nor by a static one (the probe:
// raw open/read, no preload), under a plain run and under `--ro $HOME`, on
// both rungs; a file beside them is readable under `--ro $HOME`, and a grant
// of the exact path (`--ro ~/.ssh`) opens that one. Then the carve's links:
// `--ro $HOME` grants $HOME entry by entry around the denials, and a link
// among those entries (~/x -> ~/.ssh, ~/y -> ~) must not grant what it leads
// to. Real cordon binary, real Landlock; ground truth is what the tool read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Each path of the deny list, with the file that holds its canary: the
// path itself when the list names a file, else a file inside it.
constexpr const char* kCanaries[] = {
    ".ssh/id_rsa",
    ".gnupg/x",
    ".aws/credentials",
    ".azure/x",
    ".config/gcloud/x",
    ".kube/config",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/gh/hosts.yml",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".terraform.d/x",
    ".password-store/x",
    ".local/share/keyrings/x",
    ".mozilla/firefox/p.default/cookies.sqlite",
    ".config/google-chrome/Default/Cookies",
    ".config/chromium/Default/Login Data",
    ".config/BraveSoftware/Brave-Browser/Default/Cookies",
};

void MakeDirs(const std::string& path) {
  for (size_t i = 1; (i = path.find('/', i)) != std::string::npos; ++i) {
    ::mkdir(path.substr(0, i).c_str(), 0755);
  }
}

void Plant(const std::string& path, const std::string& content) {
  MakeDirs(path);
  WriteFile(path, content);
}

std::string Canary(int i) { return "CANARY-" + std::to_string(i) + "-SECRET"; }

std::string Quote(const std::string& s) { return "'" + s + "'"; }

// A rung: Landlock + notify, or notify-all (no Landlock: the supervisor
// decides every open).
class CredentialsTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    char real[PATH_MAX];
    ASSERT_NE(::realpath(t_.outside().c_str(), real), nullptr);
    home_ = std::string(real) + "/home";
    ASSERT_EQ(::mkdir(home_.c_str(), 0755), 0);
    for (int i = 0; i < static_cast<int>(std::size(kCanaries)); ++i) {
      Plant(home_ + "/" + kCanaries[i], Canary(i) + "\n");
    }
    WriteFile(home_ + "/notes.txt", "NOTES-OK\n");
  }

  // cordon run --ro PROBEDIR EXTRA... -- sh -c SCRIPT with HOME=home_.
  RunResult Run(const std::vector<std::string>& extra, const std::string& script) {
    std::vector<std::string> args = {"--log-level", "info", "run",     "--workspace",
                                     t_.ws(),       "--ro", ProbeDir()};
    args.insert(args.end(), extra.begin(), extra.end());
    if (GetParam()) args.push_back("--test-force-notify-all");
    args.insert(args.end(), {"--", "sh", "-c", script});
    return RunCordon(args, "", {"HOME=" + home_});
  }

  // For each path: cat it (dynamic), then read it with the static probe and
  // print "static:PATH:STATUS" (0 when it read).
  static std::string Probes(const std::vector<std::string>& paths) {
    std::string s;
    for (const std::string& p : paths) {
      s += "cat " + Quote(p) + " 2>/dev/null; " + PROBE_STATIC + " read " + Quote(p) +
           "; echo \"static:" + p + ":$?\"; ";
    }
    return s + "echo done";
  }

  std::vector<std::string> CanaryPaths() const {
    std::vector<std::string> out;
    for (const char* c : kCanaries) out.push_back(home_ + "/" + c);
    return out;
  }

  // Expects no canary in the tool's output and every static read refused.
  void ExpectNoCanaryRead(const RunResult& r, const std::vector<std::string>& paths) {
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("done"));
    for (int i = 0; i < static_cast<int>(std::size(kCanaries)); ++i) {
      EXPECT_THAT(r.out, Not(HasSubstr(Canary(i)))) << "cat read " << kCanaries[i];
    }
    for (const std::string& p : paths) {
      EXPECT_THAT(r.out, HasSubstr("static:" + p + ":")) << p;
      EXPECT_THAT(r.out, Not(HasSubstr("static:" + p + ":0\n"))) << "the static probe read " << p;
    }
  }

  ScratchTree t_;
  std::string home_;
};

TEST_P(CredentialsTest, NoCanaryIsReadableUnderAPlainRun) {
  ExpectNoCanaryRead(Run({}, Probes(CanaryPaths())), CanaryPaths());
}

TEST_P(CredentialsTest, NoCanaryIsReadableUnderReadOnlyHomeButTheFileBesideThemIs) {
  std::vector<std::string> paths = CanaryPaths();
  RunResult r = Run({"--ro", home_}, Probes(paths) + "; " + Probes({home_ + "/notes.txt"}));
  ExpectNoCanaryRead(r, paths);
  EXPECT_THAT(r.out, HasSubstr("NOTES-OK")) << "cat of the honest file: " << r.err;
  EXPECT_THAT(r.out, HasSubstr("static:" + home_ + "/notes.txt:0\n")) << r.err;
}

TEST_P(CredentialsTest, AGrantOfTheExactPathOpensThatOneOnly) {
  std::vector<std::string> others = CanaryPaths();
  others.erase(others.begin());  // .ssh/id_rsa
  RunResult r =
      Run({"--ro", home_ + "/.ssh"}, Probes({home_ + "/.ssh/id_rsa"}) + "; " + Probes(others));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(Canary(0))) << r.err;
  EXPECT_THAT(r.out, HasSubstr("static:" + home_ + "/.ssh/id_rsa:0\n")) << r.err;
  for (int i = 1; i < static_cast<int>(std::size(kCanaries)); ++i) {
    EXPECT_THAT(r.out, Not(HasSubstr(Canary(i)))) << kCanaries[i];
  }
  for (const std::string& p : others) {
    EXPECT_THAT(r.out, Not(HasSubstr("static:" + p + ":0\n"))) << p;
  }
}

// `--ro $HOME` is carved around the denials: each other entry of the home
// is granted by itself, and the ruleset follows a link when it opens one.
// A link that leads to a denied path, into one or above one is granted
// nothing; the denied ~/.gnupg here is a link into ~/dotfiles, whose other
// files stay readable; an honest link stays readable.
TEST_P(CredentialsTest, ALinkBesideADeniedPathDoesNotGrantIt) {
  const std::string& h = home_;
  Plant(h + "/.ssh/id_ed25519", "LINKED-KEY\n");
  WriteFile(h + "/ok.txt", "OK-TXT\n");
  ASSERT_EQ(::symlink((h + "/.ssh").c_str(), (h + "/x").c_str()), 0);
  ASSERT_EQ(::symlink(h.c_str(), (h + "/y").c_str()), 0);
  ASSERT_EQ(::symlink(".ssh/id_ed25519", (h + "/k").c_str()), 0);
  // ~/.gnupg as a link into the dotfiles (its canary moves with it).
  Plant(h + "/dotfiles/gnupg/key", "DOTFILE-KEY\n");
  WriteFile(h + "/dotfiles/vimrc", "VIMRC-OK\n");
  ASSERT_EQ(::rename((h + "/.gnupg").c_str(), (h + "/old-gnupg").c_str()), 0);
  ASSERT_EQ(::symlink("dotfiles/gnupg", (h + "/.gnupg").c_str()), 0);
  ASSERT_EQ(::symlink("dotfiles/vimrc", (h + "/.vimrc").c_str()), 0);
  // A user's own --deny in a granted directory, and a link to it.
  Plant(h + "/proj/secret/token", "USER-DENIED\n");
  ASSERT_EQ(::symlink("secret", (h + "/proj/s").c_str()), 0);

  const std::vector<std::string> denied = {
      h + "/x/id_ed25519",       h + "/y/.ssh/id_ed25519",  h + "/k",
      h + "/.gnupg/key",         h + "/dotfiles/gnupg/key", h + "/proj/s/token",
      h + "/y/proj/secret/token"};
  const std::vector<std::string> honest = {h + "/ok.txt", h + "/dotfiles/vimrc", h + "/.vimrc"};
  RunResult r =
      Run({"--ro", h, "--deny", h + "/proj/secret"}, Probes(denied) + "; " + Probes(honest));
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* c : {"LINKED-KEY", "DOTFILE-KEY", "USER-DENIED"}) {
    EXPECT_THAT(r.out, Not(HasSubstr(c))) << r.out;
  }
  for (const std::string& p : denied) {
    EXPECT_THAT(r.out, HasSubstr("static:" + p + ":")) << p;
    EXPECT_THAT(r.out, Not(HasSubstr("static:" + p + ":0\n"))) << "the static probe read " << p;
  }
  EXPECT_THAT(r.out, HasSubstr("OK-TXT")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("VIMRC-OK")) << r.err;
  for (const std::string& p : honest) {
    EXPECT_THAT(r.out, HasSubstr("static:" + p + ":0\n")) << r.err;
  }
  if (!GetParam()) {
    EXPECT_THAT(r.err, HasSubstr("carve skips " + h + "/x: a symlink to " + h + "/.ssh"));
    EXPECT_THAT(r.err, HasSubstr("carve skips " + h + "/y: a symlink to " + h));
  }
}

INSTANTIATE_TEST_SUITE_P(Rungs, CredentialsTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return std::string(i.param ? "notify_all" : "landlock");
                         });

}  // namespace
}  // namespace cordon::testing
