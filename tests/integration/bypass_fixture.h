// The fixture of the per-operation bypass tests (bypass_test.cc,
// bypass_more_test.cc, bypass_undo_test.cc, undo_metadata_test.cc): the real cordon under a policy with or without
// sandbox.allowBypass, --deny-glob '*.pem', an approver, the audit log read
// afterwards; the probe (dynamic or static) is the test's parameter.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "policy/audit_record.h"
#include "tests/support/child_process.h"
#include "tests/support/json_lines.h"
#include "tests/support/test_env.h"

namespace cordon::testing {

inline constexpr const char* kWrite =
    R"({"security":{"assistantPermissions":{"profile":"workspace-managed/v1"}}})";
inline constexpr const char* kWriteBypass =
    R"({"security":{"assistantPermissions":{"profile":"workspace-managed/v1"}},)"
    R"("sandbox":{"allowBypass":true}})";
inline constexpr const char* kModules = "[submodule \"lib\"]\n\tpath = lib\n";

class BypassFixture : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    // .gitmodules: a protected path (policy/protected_paths.h), which git
    // run later outside the sandbox obeys.
    WriteFile(t_.Ws(".gitmodules"), kModules);
    WriteFile(t_.Ws("key.pem"), "key\n");
    WriteFile(t_.Ws("other.pem"), "other\n");
    WriteFile(t_.Ws("notes.txt"), "notes\n");
    policy_ = t_.root() + "/policy.json";
    rules_ = t_.root() + "/rules.json";
    log_ = t_.root() + "/audit.jsonl";
  }
  // cordon run under POLICY with APPROVALS, --deny-glob '*.pem', the audit
  // log at log_ (fresh each run); returns the probe's status.
  int Run(const char* policy, const std::string& approvals, std::vector<std::string> op,
          std::vector<std::string> env = {}, std::vector<std::string> extra = {}) {
    op.insert(op.begin(), GetParam());
    return RunCommand(policy, approvals, std::move(op), std::move(env), std::move(extra));
  }
  // The same with `sh -c SCRIPT`, where "$P" is the probe.
  int RunScript(const char* policy, const std::string& approvals, const std::string& script,
                std::vector<std::string> env = {}) {
    const std::string with_probe = "P='" + std::string(GetParam()) + "'; " + script;
    return RunCommand(policy, approvals, {"sh", "-c", with_probe}, std::move(env), {});
  }
  int RunCommand(const char* policy, const std::string& approvals, std::vector<std::string> cmd,
                 std::vector<std::string> env, std::vector<std::string> extra) {
    WriteFile(policy_, policy);
    ::unlink(log_.c_str());
    std::vector<std::string> a = {"run",      "--workspace",        t_.ws(),   "--ro",
                                  ProbeDir(), "--policy",           policy_,   "--deny-glob",
                                  "*.pem",    "--approvals",        approvals, "--audit",
                                  log_,       "--approval-timeout", "20"};
    a.insert(a.end(), extra.begin(), extra.end());
    a.push_back("--");
    a.insert(a.end(), cmd.begin(), cmd.end());
    last_ = RunCordon(a, "", env);
    return last_.status;
  }
  std::string Rules(const std::string& json) {
    WriteFile(rules_, json);
    return "rules:" + rules_;
  }
  std::vector<nlohmann::json> Log() {
    std::string bytes = ReadFile(log_);
    EXPECT_TRUE(policy::VerifyAuditBytes(bytes).intact);
    return JsonLines(bytes);
  }
  std::vector<nlohmann::json> Approvals() {
    std::vector<nlohmann::json> out;
    for (auto& r : Log()) {
      if (r["kind"] == "approval") out.push_back(r);
    }
    return out;
  }
  // The outcomes recorded, in order.
  std::vector<std::string> Outcomes() {
    std::vector<std::string> out;
    for (auto& r : Approvals()) {
      if (r["event"] == "outcome") out.push_back(r["outcome"]);
    }
    return out;
  }
  int Decisions(const std::string& result) {
    int n = 0;
    for (auto& r : Log()) n += r["kind"] == "decision" && r["result"] == result;
    return n;
  }

  ScratchTree t_;
  std::string policy_, rules_, log_;
  RunResult last_;
};

// A recoverable run (sensitive.delete: recoverable, the default) with its
// journal and records in the test's own state home, and `cordon undo`.
class UndoFixture : public BypassFixture {
 protected:
  std::vector<std::string> Env() const {
    return {"HOME=" + t_.root() + "/home", "XDG_STATE_HOME=" + t_.root() + "/state"};
  }
  int RunKept(const std::string& approvals, std::vector<std::string> op) {
    return Run(kWriteBypass, approvals, std::move(op), Env());
  }
  RunResult Undo() { return RunCordon({"undo"}, t_.ws(), Env()); }
  // Every run's journal place (beside the workspace, in the state home).
  std::string Journals() const { return t_.root() + "/state/cordon/journal"; }
};

// The suites of this fixture run once per probe: "Dynamic" and "Static".
inline std::string ProbeKindName(const ::testing::TestParamInfo<const char*>& info) {
  return std::string(info.param).ends_with("_static") ? "Static" : "Dynamic";
}

}  // namespace cordon::testing
