// What the supervisor decides from the policy, as one immutable value, and
// the slot a run's emulator reads it from (issue 27 item 2: live policy
// replacement; issue 23 item 3: the emulator's options become the rules
// value plus mechanisms). The mechanisms (journal, approval gates, the
// audit observer, the web proxy) are not rules: they stay in
// EmulatorOptions and outlive any reload.
//
// A request reads the slot once (LiveRules::Snapshot) and decides with that
// one value throughout, so it sees one consistent rule set. A reload first
// raises the guard (every decision refuses: "policy reload in progress"),
// then builds and checks the new value, then installs it (or keeps the old
// one) and lowers the guard: there is no moment in which neither the old
// rules, the guard nor the new rules hold (seed 002: "a replacement facade
// installs its own deny guard before removing the preceding one").
//
// Thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/result.h"
#include "policy/policy.h"
#include "policy/tool_pin.h"
#include "supervisor/tool_filter.h"
#include "supervisor/write_roots.h"

namespace cordon::supervisor {

struct Rules {
  // Where the tool may change things, each root held open; the denials and
  // read-only rules beneath them (write_roots.h).
  WriteRoots roots;
  // Under none the tool's sockets reach Unix names beneath the writable
  // paths only; under allow, other families too.
  policy::Network network = policy::Network::kNone;
  bool sensitive_delete_allowed = false;  // sensitive.delete: allow
  // Workspace-relative patterns that stay read-only (policy protectedPaths,
  // policy/protected_paths.h): checked for every change in the workspace,
  // files created later too; a directory a protected path could lie
  // beneath is not renamed (EXDEV).
  std::vector<std::string> protected_patterns;
  // Deny globs (policy/deny_glob.h), relative to `deny_globs_workspace`
  // (the workspace's realpath): no change there may make a match; with
  // `deny_globs_follow_parents` no directory there is renamed.
  std::vector<std::string> deny_globs;
  std::string deny_globs_workspace;
  bool deny_globs_follow_parents = false;
  // The exec allowlist: empty allows every exec the filesystem rules allow.
  std::vector<policy::ToolPin> pins;
  // The workspace held for bypasses alone (sandbox.allowBypass) when no
  // rule lets the tool write it (the read-only profile): where an approved
  // operation is performed (emulator_bypass.cc). No rule's root: Locate
  // never lands there, so nothing is granted through it.
  std::shared_ptr<const WriteRoot> bypass_workspace;
};

// Where a run's rules are made from its policy, fixed at launch: the
// private TMPDIR and the shared directories (LaunchRequest::shared_dirs).
struct RulesPlace {
  std::string tmp;
  std::vector<std::string> shared_dirs;
};

// The one way rules are made, at launch and at a reload: `p` validated and
// normalised (the run's policy, its run records and journal denied).
Result<std::shared_ptr<const Rules>> MakeRules(const policy::Policy& p, const RulesPlace& place);

// What a run's kernel layers were built with, recorded at launch: the
// seccomp filter's options, the rung, where its rules live. A reload plans
// the launch policy's grants and the new policy's again from the same
// listing and compares them (policy/reload_check.h): an entry made since
// launch beside a carved-out path has no kernel grant of its own, and the
// supervisor decides it by the launch's rules, so it counts as granted to
// both.
struct LaunchedLayers {
  ToolFilterOptions filter;
  Rung rung = Rung::kLandlockNotify;
  int landlock_abi = 0;
  RulesPlace place;
};

class LiveRules {
 public:
  LiveRules() = default;
  LiveRules(const LiveRules&) = delete;
  LiveRules& operator=(const LiveRules&) = delete;

  // The rules in force, or null while a reload holds the guard.
  std::shared_ptr<const Rules> Snapshot() const;
  // The rules in force whether or not the guard is up (the emulator's
  // destructor, reload's "old policy").
  std::shared_ptr<const Rules> Current() const { return current_.load(); }

  // Launch: the first rules and the layers they were built with.
  void Start(std::shared_ptr<const Rules> first, LaunchedLayers layers);
  bool started() const { return started_.load(); }
  // Set once by Start, before the tool runs; read-only afterwards.
  const LaunchedLayers& layers() const { return layers_; }

  // Reload, in this order: Guard(); build and check; Install(new) or
  // Lift(). One reload at a time: Guard blocks until the previous one has
  // ended. Every rule set ever installed is kept until the run ends, so a
  // decision that began under one never outlives it (its WriteRoot
  // pointers stay valid; a reload is rare and each holds a few fds).
  void Guard();
  void Install(std::shared_ptr<const Rules> next);
  void Lift();
  bool guarded() const { return guarded_.load(); }

 private:
  std::atomic<std::shared_ptr<const Rules>> current_;
  std::atomic<bool> guarded_{false};
  std::atomic<bool> started_{false};
  LaunchedLayers layers_;
  std::mutex reload_mu_;  // held from Guard to Install or Lift
  std::mutex kept_mu_;
  std::vector<std::shared_ptr<const Rules>> kept_;
};

}  // namespace cordon::supervisor
