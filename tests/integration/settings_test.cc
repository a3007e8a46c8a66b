// The settings toggle (seed 004's /sandbox), end to end: `cordon sandbox
// status|enable|disable` on ${XDG_CONFIG_HOME}/cordon/settings.json, and
// `cordon run` taking that file as its policy when no --policy is given.
// The real binary, the real kernel, the probe (exit status = errno); the
// file and the tool's effects are checked on disk from outside.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class SettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    home_ = t_.root() + "/home";
    config_ = t_.root() + "/config";
    settings_ = config_ + "/cordon/settings.json";
    ASSERT_EQ(::mkdir(home_.c_str(), 0700), 0);
  }
  std::vector<std::string> Env() const {
    return {"HOME=" + home_, "XDG_CONFIG_HOME=" + config_, "XDG_STATE_HOME=" + home_ + "/state"};
  }
  RunResult Sandbox(std::vector<std::string> args) {
    args.insert(args.begin(), "sandbox");
    return last_ = RunCordon(args, t_.root(), Env());
  }
  // cordon run [ARGS] -- probe OP...; the status.
  int Run(std::vector<std::string> args, std::vector<std::string> op) {
    std::vector<std::string> a = {"run", "--workspace", t_.ws(), "--ro", ProbeDir()};
    a.insert(a.end(), args.begin(), args.end());
    a.push_back("--");
    a.push_back(PROBE_DYNAMIC);
    a.insert(a.end(), op.begin(), op.end());
    last_ = RunCordon(a, t_.root(), Env());
    return last_.status;
  }
  void Settings(const std::string& text) {
    ASSERT_EQ(::mkdir(config_.c_str(), 0700), 0);
    ASSERT_EQ(::mkdir((config_ + "/cordon").c_str(), 0700), 0);
    WriteFile(settings_, text);
  }
  nlohmann::ordered_json SettingsJson() {
    return nlohmann::ordered_json::parse(ReadFile(settings_), nullptr, false);
  }

  ScratchTree t_;
  std::string home_, config_, settings_;
  RunResult last_;
};

TEST_F(SettingsTest, StatusWithoutAFileSaysDefaultAndWritesNothing) {
  ASSERT_EQ(Sandbox({"status"}).status, 0) << last_.err;
  EXPECT_THAT(last_.out, HasSubstr("sandbox: enabled (default: no settings file at " + settings_));
  EXPECT_THAT(last_.out, HasSubstr("profile: read-only"));
  EXPECT_FALSE(Exists(config_));
}

// A toggle must not loosen anything: a settings file that is only a
// sandbox section would make the workspace writable (seed 004's
// addCurrentWorkingDirectory), so enable keeps it read-only.
TEST_F(SettingsTest, EnableCreatesTheFileOwnerOnlyAndKeepsTheProfile) {
  ASSERT_EQ(Sandbox({"enable"}).status, 0) << last_.err;
  EXPECT_THAT(last_.out, HasSubstr("sandbox: enabled (created " + settings_));
  struct stat st;
  ASSERT_EQ(::stat(settings_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ASSERT_EQ(::stat((config_ + "/cordon").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat(config_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  auto j = SettingsJson();
  EXPECT_EQ(j["sandbox"]["enabled"], true) << j.dump();
  EXPECT_EQ(j["sandbox"]["addCurrentWorkingDirectory"], false) << j.dump();
  EXPECT_EQ(Run({}, {"create", "new.txt"}), EACCES) << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("new.txt"))) << "enable made the workspace writable";
  ASSERT_EQ(Sandbox({"status"}).status, 0) << last_.err;
  EXPECT_THAT(last_.out, HasSubstr("sandbox: enabled (" + settings_ + ")"));
  EXPECT_THAT(last_.out, HasSubstr("profile: read-only"));
  // No temporary file is left beside it.
  std::string ls = t_.root() + "/ls.txt";
  ASSERT_EQ(std::system(("ls -A '" + config_ + "/cordon' > '" + ls + "'").c_str()), 0);
  EXPECT_EQ(ReadFile(ls), "settings.json\n");
}

// Without --policy the settings file is the policy; with it, the file is
// not read. One-run flags still override it.
TEST_F(SettingsTest, RunTakesTheSettingsFileAsItsPolicy) {
  std::string out_file = t_.Out("from-settings");
  Settings(R"({"sandbox":{"filesystem":{"readwritePaths":[")" + t_.outside() + R"("]}}})");
  EXPECT_EQ(Run({}, {"create", out_file}), 0) << last_.err;
  EXPECT_TRUE(Exists(out_file));
  // seed 004: a sandbox section's workspace is writable (addCurrentWorkingDirectory).
  EXPECT_EQ(Run({}, {"create", "new.txt"}), 0) << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("new.txt")));
  // --profile overrides it for one run.
  EXPECT_EQ(Run({"--profile", "read-only"}, {"create", "other.txt"}), EACCES);
  EXPECT_FALSE(Exists(t_.Ws("other.txt")));
  // --policy replaces it whole: the settings' grant is gone.
  std::string policy = t_.root() + "/policy.json";
  WriteFile(policy, "{}");
  EXPECT_EQ(Run({"--policy", policy}, {"create", t_.Out("from-policy")}), EACCES);
  EXPECT_FALSE(Exists(t_.Out("from-policy")));
  // policy explain without a file says where a run's policy comes from.
  last_ = RunCordon({"policy", "explain", "--workspace", t_.ws()}, t_.root(), Env());
  ASSERT_EQ(last_.status, 0) << last_.err;
  EXPECT_THAT(last_.out, HasSubstr("a run from here: the settings file " + settings_));
  EXPECT_THAT(last_.out, HasSubstr(t_.outside()));
}

// Disable never grants a bypass silently: it needs allowBypass in the file,
// or --allow-bypass, which writes it and says so. --sandbox and
// --no-sandbox change one run and never the file.
TEST_F(SettingsTest, DisableNeedsAllowBypassAndOneRunFlagsNeverPersist) {
  const std::string before = R"({"links": "strict", "sandbox": {"enabled": true}})";
  Settings(before);
  ASSERT_EQ(Sandbox({"disable"}).status, 125);
  EXPECT_THAT(last_.err, HasSubstr("sandbox disable refused"));
  EXPECT_THAT(last_.err, HasSubstr("--allow-bypass"));
  EXPECT_EQ(Lines(last_.err), 1) << last_.err;
  EXPECT_EQ(ReadFile(settings_), before) << "a refused disable must leave the file as it was";
  EXPECT_EQ(Run({}, {"create", t_.Out("escaped")}), EACCES) << last_.err;

  ASSERT_EQ(Sandbox({"disable", "--allow-bypass"}).status, 0) << last_.err;
  EXPECT_THAT(last_.out, HasSubstr("sandbox.allowBypass = true"));
  EXPECT_THAT(last_.out, HasSubstr("UNCONFINED"));
  auto j = SettingsJson();
  EXPECT_EQ(j.dump(), R"({"links":"strict","sandbox":{"enabled":false,"allowBypass":true}})");
  ASSERT_EQ(Sandbox({"status"}).status, 0) << last_.err;
  EXPECT_THAT(last_.out, HasSubstr("sandbox: disabled (" + settings_));

  const std::string disabled = ReadFile(settings_);
  struct stat st0, st1;
  ASSERT_EQ(::stat(settings_.c_str(), &st0), 0);
  EXPECT_EQ(Run({}, {"create", t_.Out("escaped")}), 0) << last_.err;
  EXPECT_TRUE(Exists(t_.Out("escaped"))) << "a disabled sandbox runs the tool unconfined";
  EXPECT_THAT(last_.err, HasSubstr("SANDBOX BYPASSED"));
  EXPECT_EQ(Run({"--sandbox"}, {"create", t_.Out("confined")}), EACCES) << last_.err;
  EXPECT_FALSE(Exists(t_.Out("confined")));
  EXPECT_EQ(Run({"--no-sandbox"}, {"create", t_.Out("bypassed")}), 0) << last_.err;
  ASSERT_EQ(::stat(settings_.c_str(), &st1), 0);
  EXPECT_EQ(ReadFile(settings_), disabled) << "a one-run flag changed the settings file";
  EXPECT_EQ(st1.st_ino, st0.st_ino);
  EXPECT_EQ(st1.st_mtim.tv_sec, st0.st_mtim.tv_sec);
  EXPECT_EQ(st1.st_mtim.tv_nsec, st0.st_mtim.tv_nsec);

  // enable changes enabled alone: allowBypass and links stay.
  ASSERT_EQ(Sandbox({"enable"}).status, 0) << last_.err;
  EXPECT_EQ(SettingsJson().dump(),
            R"({"links":"strict","sandbox":{"enabled":true,"allowBypass":true}})");
  EXPECT_EQ(Run({}, {"create", t_.Out("after-enable")}), EACCES) << last_.err;
  EXPECT_FALSE(Exists(t_.Out("after-enable")));
  const std::string enabled = ReadFile(settings_);
  EXPECT_EQ(Run({"--no-sandbox"}, {"create", t_.Out("bypassed-once")}), 0) << last_.err;
  EXPECT_TRUE(Exists(t_.Out("bypassed-once")));
  EXPECT_EQ(ReadFile(settings_), enabled) << "--no-sandbox changed the settings file";
  // Already enabled: nothing is written.
  ASSERT_EQ(::stat(settings_.c_str(), &st0), 0);
  ASSERT_EQ(Sandbox({"enable"}).status, 0) << last_.err;
  EXPECT_THAT(last_.out, HasSubstr("already enabled"));
  ASSERT_EQ(::stat(settings_.c_str(), &st1), 0);
  EXPECT_EQ(st1.st_ino, st0.st_ino);
}

TEST_F(SettingsTest, EditKeepsEveryOtherKeyInItsOrder) {
  const std::string original = R"({
  "limits": {"treeEntries": 500, "treeDepth": 8},
  "sandbox": {
    "allowBypass": true,
    "filesystem": {"readonlyPaths": ["/opt"], "deniedPaths": ["**/.env"], "clearPolicyOnExit": true},
    "enabled": true,
    "network": {"allowOutbound": false}
  },
  "protectedPaths": ["+Makefile.local"],
  "sensitive": {"delete": "deny"}
})";
  Settings(original);
  ASSERT_EQ(Sandbox({"disable"}).status, 0) << last_.err;
  auto want = nlohmann::ordered_json::parse(original);
  want["sandbox"]["enabled"] = false;
  EXPECT_EQ(SettingsJson().dump(), want.dump());
  ASSERT_EQ(Sandbox({"enable"}).status, 0) << last_.err;
  EXPECT_EQ(SettingsJson().dump(), nlohmann::ordered_json::parse(original).dump());
}

// A file under a symlink (a dotfiles checkout) is edited where it lives.
TEST_F(SettingsTest, ASymlinkedFileIsEditedInPlace) {
  std::string real = t_.root() + "/dotfiles-settings.json";
  WriteFile(real, R"({"sandbox":{"enabled":false,"allowBypass":true}})");
  ASSERT_EQ(::mkdir(config_.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((config_ + "/cordon").c_str(), 0700), 0);
  ASSERT_EQ(::symlink(real.c_str(), settings_.c_str()), 0);
  ASSERT_EQ(Sandbox({"enable"}).status, 0) << last_.err;
  struct stat st;
  ASSERT_EQ(::lstat(settings_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link was replaced by a file";
  EXPECT_EQ(nlohmann::json::parse(ReadFile(real))["sandbox"]["enabled"], true);
}

// Bad input: one line, status 125, the file as it was, no tool run.
TEST_F(SettingsTest, BadSettingsFileIsOneLineAnd125AndUntouched) {
  struct Case {
    const char* text;
    const char* says;
  };
  const Case cases[] = {
      {"{not json", "JSON syntax"},
      {R"({"sandbox":{"enabled":"yes"}})", "/sandbox/enabled: must be true or false"},
      {R"({"sandbox":{"enabeld":true}})", "/sandbox/enabeld: unknown key"},
      {R"({"sandbox":[]})", "/sandbox: must be an object"},
      {R"([1,2])", "must be an object"},
      {R"({"links":"strict","links":"kernel"})", "/links: duplicate key"},
      {R"({"sandbox":{"filesystem":{"clearPolicyOnExit":false}}})", "false is not supported"},
  };
  Settings("");
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    WriteFile(settings_, c.text);
    for (const char* verb : {"status", "enable", "disable"}) {
      SCOPED_TRACE(verb);
      ASSERT_EQ(Sandbox({verb}).status, 125) << last_.out;
      EXPECT_THAT(last_.err, HasSubstr(settings_));
      EXPECT_THAT(last_.err, HasSubstr(c.says));
      EXPECT_EQ(Lines(last_.err), 1) << last_.err;
      EXPECT_EQ(ReadFile(settings_), c.text);
    }
    EXPECT_EQ(Run({}, {"create", t_.Out("ran")}), 125);
    EXPECT_THAT(last_.err, HasSubstr(c.says));
    EXPECT_FALSE(Exists(t_.Out("ran")));
    // --policy does not read the settings file.
    std::string policy = t_.root() + "/policy.json";
    WriteFile(policy, "{}");
    EXPECT_EQ(Run({"--policy", policy}, {"read", t_.Ws("x")}), ENOENT) << last_.err;
  }
}

TEST_F(SettingsTest, UnknownOrMissingSubcommandIsOneLineAnd125) {
  for (std::vector<std::string> args : {std::vector<std::string>{"bogus"}, {}, {"enable", "extra"}}) {
    ASSERT_EQ(Sandbox(args).status, 125);
    EXPECT_EQ(Lines(last_.err), 1) << last_.err;
    EXPECT_THAT(last_.out, Not(HasSubstr("sandbox:")));
    EXPECT_THAT(last_.err, HasSubstr(args.empty() ? "status, enable, disable" : args.back()));
  }
  EXPECT_FALSE(Exists(config_));
}

TEST_F(SettingsTest, UnreadableSettingsFileIs125) {
  Settings("{}");
  ASSERT_EQ(::unlink(settings_.c_str()), 0);
  ASSERT_EQ(::mkdir(settings_.c_str(), 0700), 0);  // a directory where the file goes
  ASSERT_EQ(Sandbox({"status"}).status, 125);
  EXPECT_THAT(last_.err, HasSubstr("cannot read it"));
  EXPECT_EQ(Lines(last_.err), 1) << last_.err;
  ASSERT_EQ(Sandbox({"enable"}).status, 125);
  EXPECT_EQ(Run({}, {"create", t_.Out("ran")}), 125);
  EXPECT_FALSE(Exists(t_.Out("ran")));
}

// XDG base directory spec: a relative XDG_CONFIG_HOME is ignored.
TEST_F(SettingsTest, RelativeXdgConfigHomeIsIgnored) {
  last_ = RunCordon({"sandbox", "enable"}, t_.root(),
                    {"HOME=" + home_, "XDG_CONFIG_HOME=rel/config"});
  ASSERT_EQ(last_.status, 0) << last_.err;
  EXPECT_THAT(last_.err, HasSubstr("XDG_CONFIG_HOME=rel/config is relative and ignored"));
  EXPECT_TRUE(Exists(home_ + "/.config/cordon/settings.json"));
  EXPECT_FALSE(Exists(t_.root() + "/rel"));
}

}  // namespace
}  // namespace cordon::testing
