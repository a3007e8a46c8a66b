// Whether a running tool's policy may be replaced by another (`cordon
// policy reload`, issue 27 item 2). The kernel layers of a running tool
// (its Landlock ruleset, its seccomp filter) cannot be changed from
// outside it, so a reload changes only what the supervisor decides. It is
// refused when the new policy would need more than those layers give:
// a path the ruleset does not grant (a new read or write root, a denial
// removed that Landlock carved out, an exec right), a syscall the filter
// does not send to the supervisor (an exec allowlist where none was, a
// changed path rule where the filter leaves some changes to the kernel),
// or what the run set up at launch (the workspace, the network mode, a
// wider web grant than its proxy's, sensitive.delete's journal or
// approver, the link mode, the private TMPDIR). Pure: the plans are computed by the caller.
#pragma once

#include <string>
#include <vector>

#include "policy/fs_plan.h"
#include "policy/policy.h"

namespace cordon::policy {

// What a run's kernel layers grant and send to the supervisor: for the
// running tool as launched, or as a policy would need them.
struct EnforcedLayers {
  std::vector<Grant> grants;     // the Landlock plan (PlanGrants)
  bool decides_changes = false;  // every write open, delete and rename is notified
  bool decides_exec = false;     // execve is notified (an exec allowlist)
};

// The message every refusal for a looser layer ends with.
inline constexpr const char* kNeedsNewRun =
    "this reload needs a looser kernel layer; start a new run";

// Why `wanted` (with the layers it would need) cannot replace `running`
// (with the layers the tool runs under), one line each; empty: it can.
std::vector<std::string> ReloadRefusals(const Policy& running, const EnforcedLayers& running_layers,
                                        const Policy& wanted, const EnforcedLayers& wanted_layers);

// What `wanted` would keep the tool from reading that the running tool's
// Landlock ruleset still lets it read. A reload cannot narrow reads (the
// kernel's read grant is the launch's; reads are not sent to the
// supervisor), so these stay readable until the run ends: a denial inside
// a read grant names the denied path, a read root dropped whole names the
// root. Sorted, each once, none beneath another.
std::vector<std::string> ReadsLeftOpen(const EnforcedLayers& running_layers, const Policy& wanted,
                                       const EnforcedLayers& wanted_layers);

// Under public-web or hosts: what `wanted`'s web grant (hosts, CONNECT
// ports, caps) would add to `running`'s, as one line ending "start a new
// run"; empty when it adds nothing (the proxy may take it: a reload
// narrows what the supervisor's proxy lets through, as it narrows paths).
// Empty as well when the two differ in mode, which ReloadRefusals refuses.
std::string WebGrantWidens(const Policy& running, const Policy& wanted);

// Whether `grants` give `g`'s rights on `g.path` (Landlock's rights on a
// path are the union of those of the grants on it and above it).
bool GrantsCover(const std::vector<Grant>& grants, const Grant& g);

}  // namespace cordon::policy
