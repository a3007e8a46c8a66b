// policy/reload_check.h: which policy may replace a running tool's. Plans
// from PlanGrants over a fake tree, as the supervisor makes them.
#include "policy/reload_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "tests/support/fake_tree.h"

namespace cordon::policy {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

const auto Tree = cordon::testing::FakeTree;

const DirLister kTree = Tree(
    {{"/", {"usr", "w", "other"}}, {"/w", {"src", "secret", ".env"}}, {"/usr", {"bin", "lib"}}});

Policy Base() {
  Policy p;
  p.workspace = "/w";
  p.profile = Profile::kWorkspaceWrite;
  p.paths = {PathRule::ReadOnly("/usr"), PathRule::ReadWrite("/w")};
  return p;
}

EnforcedLayers Layers(const Policy& p, bool decides_changes = true) {
  return {PlanGrants(p.paths, kTree), decides_changes, !p.tools.empty()};
}

std::string Joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

TEST(ReloadRefusals, TheSamePolicyIsAccepted) {
  const Policy p = Base();
  EXPECT_THAT(ReloadRefusals(p, Layers(p), p, Layers(p)), IsEmpty());
}

TEST(ReloadRefusals, ANewDenialInsideAGrantIsATighteningAndAccepted) {
  const Policy old = Base();
  Policy next = Base();
  next.paths.push_back(PathRule::Denied("/w/secret"));
  EXPECT_THAT(ReloadRefusals(old, Layers(old), next, Layers(next)), IsEmpty());
}

TEST(ReloadRefusals, ARemovedWriteRootIsATighteningAndAccepted) {
  const Policy old = Base();
  Policy next = Base();
  next.paths[1] = PathRule::ReadOnly("/w");
  EXPECT_THAT(ReloadRefusals(old, Layers(old), next, Layers(next)), IsEmpty());
}

TEST(ReloadRefusals, ANewReadOrWriteRootNeedsANewRun) {
  const Policy old = Base();
  for (PathRule extra : {PathRule::ReadOnly("/other"), PathRule::ReadWrite("/usr/lib")}) {
    Policy next = Base();
    next.paths.push_back(extra);
    const auto why = ReloadRefusals(old, Layers(old), next, Layers(next));
    ASSERT_EQ(why.size(), 1u) << extra.path;
    EXPECT_THAT(why[0], HasSubstr(extra.path));
    EXPECT_THAT(why[0], HasSubstr(kNeedsNewRun));
  }
}

TEST(ReloadRefusals, ARemovedDenialLandlockCarvedNeedsANewRun) {
  Policy old = Base();
  old.paths.push_back(PathRule::Denied("/w/secret"));
  const Policy next = Base();
  const auto why = ReloadRefusals(old, Layers(old), next, Layers(next));
  ASSERT_FALSE(why.empty());
  EXPECT_THAT(Joined(why), HasSubstr("read-write and execute on /w"));
  EXPECT_THAT(Joined(why), HasSubstr(kNeedsNewRun));
}

TEST(ReloadRefusals, ExecRightsCount) {
  Policy old = Base();
  old.paths[0] = PathRule::ReadOnlyNoExec("/usr");
  const Policy next = Base();
  EXPECT_THAT(Joined(ReloadRefusals(old, Layers(old), next, Layers(next))),
              HasSubstr("read and execute on /usr"));
  // And the other way round: fewer rights, accepted.
  EXPECT_THAT(ReloadRefusals(next, Layers(next), old, Layers(old)), IsEmpty());
}

TEST(ReloadRefusals, WhatWasSetUpAtLaunchCannotChange) {
  const Policy old = Base();
  struct Case {
    const char* what;
    void (*change)(Policy&);
  } cases[] = {
      {"network", [](Policy& p) { p.network = Network::kAllow; }},
      {"network", [](Policy& p) { p.network = Network::kPublicWeb; }},
      {"sensitive.delete", [](Policy& p) { p.sensitive_delete = SensitiveDelete::kAllow; }},
      {"sensitive.delete", [](Policy& p) { p.sensitive_delete = SensitiveDelete::kDeny; }},
      {"links", [](Policy& p) { p.links = LinkMode::kKernel; }},
      {"sandbox.allowBypass", [](Policy& p) { p.allow_bypass = !p.allow_bypass; }},
      {"the workspace", [](Policy& p) { p.workspace = "/w/src"; }},
      {"web proxy", [](Policy& p) { p.web.ports = {443}; }},
      {"TMPDIR", [](Policy& p) { p.private_tmp = false; }},
  };
  for (const Case& c : cases) {
    Policy next = Base();
    c.change(next);
    EXPECT_THAT(Joined(ReloadRefusals(old, Layers(old), next, Layers(next))), HasSubstr(c.what))
        << c.what;
  }
}

Policy Proxied(Network mode, std::vector<HostPattern> hosts = {}) {
  Policy p = Base();
  p.network = mode;
  p.web.hosts = std::move(hosts);
  return p;
}

// A reload narrows the web proxy's grant as it narrows paths: fewer hosts,
// ports and lower caps are taken (the proxy's next connections), more are not.
TEST(ReloadRefusals, TheWebProxysGrantMayNarrowNotWiden) {
  const Policy old = Proxied(Network::kHosts, {{"github.com", false}, {"npmjs.org", true}});
  struct Case {
    const char* what;
    void (*change)(Policy&);
    const char* refused;  // "" when the reload is a narrowing
  } cases[] = {
      {"one host fewer",
       [](Policy& p) {
         p.web.hosts = {{"github.com", false}};
       },
       ""},
      {"a name beneath a suffix",
       [](Policy& p) {
         p.web.hosts = {{"registry.npmjs.org", false}};
       },
       ""},
      {"a narrower suffix",
       [](Policy& p) {
         p.web.hosts = {{"a.npmjs.org", true}};
       },
       ""},
      {"the same suffix",
       [](Policy& p) {
         p.web.hosts = {{"npmjs.org", true}};
       },
       ""},
      {"no host at all", [](Policy& p) { p.web.hosts = {}; }, ""},
      {"a port fewer", [](Policy& p) { p.web.ports = {443}; }, ""},
      {"lower caps",
       [](Policy& p) {
         p.web.max_response_bytes = 1024;
         p.web.timeout_seconds = 5;
         p.web.max_connections = 2;
       },
       ""},
      {"a new host",
       [](Policy& p) {
         p.web.hosts.push_back({"example.com", false});
       },
       "example.com"},
      {"the suffix's own name",
       [](Policy& p) {
         p.web.hosts = {{"npmjs.org", false}};
       },
       "npmjs.org"},
      {"a wider suffix",
       [](Policy& p) {
         p.web.hosts = {{"org", true}};
       },
       "*.org"},
      {"an exact name as a suffix",
       [](Policy& p) {
         p.web.hosts = {{"github.com", true}};
       },
       "*.github.com"},
      {"a new port", [](Policy& p) { p.web.ports.push_back(8443); }, "port 8443"},
      {"a higher byte cap", [](Policy& p) { p.web.max_response_bytes *= 2; }, "maxResponseBytes"},
      {"a longer time cap", [](Policy& p) { p.web.timeout_seconds += 1; }, "timeoutSeconds"},
      {"more connections", [](Policy& p) { p.web.max_connections += 1; }, "maxConnections"},
      {"public-web for hosts", [](Policy& p) { p.network = Network::kPublicWeb; }, "network"},
  };
  for (const Case& c : cases) {
    Policy next = old;
    c.change(next);
    const std::string refusals = Joined(ReloadRefusals(old, Layers(old), next, Layers(next)));
    if (*c.refused == '\0') {
      EXPECT_EQ(refusals, "") << c.what;
    } else {
      EXPECT_THAT(refusals, HasSubstr(c.refused)) << c.what;
      EXPECT_THAT(refusals, HasSubstr("start a new run")) << c.what;
    }
  }
  // Under public-web the host list is not what decides; ports and caps are.
  const Policy web = Proxied(Network::kPublicWeb);
  Policy fewer = web;
  fewer.web.ports = {443};
  EXPECT_THAT(ReloadRefusals(web, Layers(web), fewer, Layers(fewer)), IsEmpty());
  Policy hosts = web;
  hosts.network = Network::kHosts;  // every method to those hosts: not a narrowing
  EXPECT_THAT(Joined(ReloadRefusals(web, Layers(web), hosts, Layers(hosts))), HasSubstr("network"));
}

TEST(ReloadRefusals, AnExecAllowlistNeedsTheFilterToSendExecs) {
  const Policy old = Base();
  Policy next = Base();
  next.tools.push_back({"rg", "/usr/bin/rg"});
  const auto why = Joined(ReloadRefusals(old, Layers(old), next, Layers(next)));
  EXPECT_THAT(why, HasSubstr("/usr/bin/rg, which this run did not pin"));
  EXPECT_THAT(why, HasSubstr("every exec sent to the supervisor"));
  // A pin the run has: kept.
  Policy pinned = next;
  EXPECT_THAT(ReloadRefusals(pinned, Layers(pinned), next, Layers(next)), IsEmpty());
}

TEST(ReloadRefusals, AChangedRuleNeedsTheSupervisorToSeeEveryChange) {
  const Policy old = Base();
  Policy next = Base();
  next.paths.push_back(PathRule::Denied("/w/secret"));
  EXPECT_THAT(Joined(ReloadRefusals(old, Layers(old, false), next, Layers(next))),
              HasSubstr("leaves some writes and deletes to the kernel"));
  // The same rules again: nothing to enforce anew.
  EXPECT_THAT(ReloadRefusals(old, Layers(old, false), old, Layers(old)), IsEmpty());
  Policy globbed = Base();
  globbed.deny_globs = {"**/.env"};
  EXPECT_THAT(ReloadRefusals(old, Layers(old, false), globbed, Layers(globbed)), Not(IsEmpty()));
}

// A reload cannot narrow what the kernel lets the tool read: what it would
// is named, so that `cordon policy reload` says so instead of implying it.
TEST(ReadsLeftOpen, ANewDenialInsideAReadGrantIsNamed) {
  const Policy old = Base();
  Policy next = Base();
  next.paths.push_back(PathRule::Denied("/w/secret"));
  EXPECT_THAT(ReadsLeftOpen(Layers(old), next, Layers(next)), ::testing::ElementsAre("/w/secret"));
}

TEST(ReadsLeftOpen, AReadRootDroppedWholeIsNamed) {
  const Policy old = Base();
  Policy next = Base();
  next.paths.erase(next.paths.begin());  // no more /usr
  EXPECT_THAT(ReadsLeftOpen(Layers(old), next, Layers(next)), ::testing::ElementsAre("/usr"));
}

TEST(ReadsLeftOpen, NestedOnesAreNamedOnceByTheOutermost) {
  const Policy old = Base();
  Policy next = Base();
  next.paths.push_back(PathRule::Denied("/usr/bin"));
  next.paths.push_back(PathRule::Denied("/usr"));
  EXPECT_THAT(ReadsLeftOpen(Layers(old), next, Layers(next)), ::testing::ElementsAre("/usr"));
}

TEST(ReadsLeftOpen, WhatLeavesReadsAsTheyWereNamesNothing) {
  const Policy old = Base();
  EXPECT_THAT(ReadsLeftOpen(Layers(old), old, Layers(old)), IsEmpty());
  // A write root made read-only: reads as before.
  Policy ro = Base();
  ro.paths[1] = PathRule::ReadOnly("/w");
  EXPECT_THAT(ReadsLeftOpen(Layers(old), ro, Layers(ro)), IsEmpty());
  // A denial the run was launched with: the kernel already refuses it.
  Policy denied = Base();
  denied.paths.push_back(PathRule::Denied("/w/secret"));
  EXPECT_THAT(ReadsLeftOpen(Layers(denied), denied, Layers(denied)), IsEmpty());
  // A denial outside every read grant: nothing was readable there.
  Policy outside = Base();
  outside.paths.push_back(PathRule::Denied("/other"));
  EXPECT_THAT(ReadsLeftOpen(Layers(old), outside, Layers(outside)), IsEmpty());
}

TEST(GrantsCover, RightsAreTheUnionOfTheGrantsAbove) {
  const std::vector<Grant> g = {{"/a", Access::kReadOnly, false},
                                {"/a/b", Access::kReadWrite, false},
                                {"/x", Access::kReadOnly, true, true}};
  EXPECT_TRUE(GrantsCover(g, {"/a/b/c", Access::kReadWrite, false}));
  EXPECT_FALSE(GrantsCover(g, {"/a/c", Access::kReadWrite, false}));
  EXPECT_FALSE(GrantsCover(g, {"/a/c", Access::kReadOnly, true}));        // no execute
  EXPECT_TRUE(GrantsCover(g, {"/x/y", Access::kReadOnly, false, true}));  // listing
  EXPECT_FALSE(GrantsCover(g, {"/x/y", Access::kReadOnly, false}));       // reading
  EXPECT_FALSE(GrantsCover(g, {"/ab", Access::kReadOnly, false}));        // not beneath /a
}

}  // namespace
}  // namespace cordon::policy
