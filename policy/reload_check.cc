#include "policy/reload_check.h"

#include <algorithm>
#include <tuple>

#include "policy/web_url.h"

namespace cordon::policy {
namespace {

// list < read < read-write: the rights a grant gives (fs_plan.h).
int Level(const Grant& g) {
  if (g.list_only) return 0;
  return g.access == Access::kReadWrite ? 2 : 1;
}

std::string Describe(const Grant& g) {
  const char* what = g.list_only                      ? "listing"
                     : g.access == Access::kReadWrite ? "read-write"
                                                      : "read";
  return std::string(what) + (Level(g) > 0 && g.executable ? " and execute" : "") + " on " + g.path;
}

bool SameRules(const Policy& a, const EnforcedLayers& al, const Policy& b,
               const EnforcedLayers& bl) {
  auto key = [](const Grant& g) { return std::tie(g.path, g.access, g.executable, g.list_only); };
  auto sorted = [&](std::vector<Grant> v) {
    std::sort(v.begin(), v.end(), [&](const Grant& x, const Grant& y) { return key(x) < key(y); });
    return v;
  };
  const auto ag = sorted(al.grants), bg = sorted(bl.grants);
  const bool same_grants =
      std::equal(ag.begin(), ag.end(), bg.begin(), bg.end(),
                 [&](const Grant& x, const Grant& y) { return key(x) == key(y); });
  return same_grants && a.protected_patterns == b.protected_patterns &&
         a.deny_globs == b.deny_globs && a.profile == b.profile;
}

// Whether every name `want` admits, `have` admits too.
bool HostCovered(const std::vector<HostPattern>& have, const HostPattern& want) {
  if (!want.suffix) return HostAllowed(have, want.name);
  // "*.x": the names beneath x, each beneath a suffix pattern at or above x.
  return std::any_of(have.begin(), have.end(), [&](const HostPattern& h) {
    return h.suffix && (h.name == want.name || HostAllowed({h}, want.name));
  });
}

}  // namespace

bool GrantsCover(const std::vector<Grant>& grants, const Grant& g) {
  int level = -1;
  bool exec = false;
  for (const Grant& h : grants) {
    if (!IsWithin(g.path, h.path)) continue;
    level = std::max(level, Level(h));
    exec = exec || (Level(h) > 0 && h.executable);
  }
  return level >= Level(g) && (Level(g) == 0 || !g.executable || exec);
}

std::vector<std::string> ReadsLeftOpen(const EnforcedLayers& running_layers, const Policy& wanted,
                                       const EnforcedLayers& wanted_layers) {
  auto lost = [&](const std::string& path) {
    const Grant read{path, Access::kReadOnly};
    return GrantsCover(running_layers.grants, read) && !GrantsCover(wanted_layers.grants, read);
  };
  std::vector<std::string> out;
  // A denial: its own path (the planner carves it out of the grants above).
  for (const PathRule& r : EffectiveRules(wanted, "")) {
    if (r.access == Access::kDenied && lost(r.path)) out.push_back(r.path);
  }
  // A read root with no denial beneath it that explains the loss: dropped whole.
  for (const Grant& g : running_layers.grants) {
    if (Level(g) == 0 || !lost(g.path)) continue;
    const bool explained = std::any_of(out.begin(), out.end(),
                                       [&](const std::string& d) { return IsWithin(d, g.path); });
    if (!explained) out.push_back(g.path);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  // The outermost of nested ones (a parent sorts before its children).
  std::vector<std::string> outer;
  for (std::string& p : out) {
    if (std::none_of(outer.begin(), outer.end(),
                     [&](const std::string& o) { return IsWithin(p, o); })) {
      outer.push_back(std::move(p));
    }
  }
  return outer;
}

std::string WebGrantWidens(const Policy& running, const Policy& wanted) {
  if (running.network == wanted.network && running.web == wanted.web) return "";
  if (running.network != wanted.network || !NetworkProxied(running.network))
    return "";  // a mode change: said apart
  const WebGrant& have = running.web;
  const WebGrant& want = wanted.web;
  std::vector<std::string> wider;
  if (wanted.network == Network::kHosts) {
    for (const HostPattern& h : want.hosts) {
      if (!HostCovered(have.hosts, h)) wider.push_back((h.suffix ? "*." : "") + h.name);
    }
  }
  for (uint16_t port : want.ports) {
    if (std::find(have.ports.begin(), have.ports.end(), port) == have.ports.end()) {
      wider.push_back("port " + std::to_string(port));
    }
  }
  if (want.max_response_bytes > have.max_response_bytes) wider.push_back("maxResponseBytes");
  if (want.timeout_seconds > have.timeout_seconds) wider.push_back("timeoutSeconds");
  if (want.max_connections > have.max_connections) wider.push_back("maxConnections");
  if (wider.empty()) return "";
  std::string list;
  for (const std::string& w : wider) list += (list.empty() ? "" : ", ") + w;
  return "network: a reload may narrow the web proxy's hosts, ports and limits, not widen them (" +
         list + "); start a new run";
}

std::vector<std::string> ReloadRefusals(const Policy& running, const EnforcedLayers& running_layers,
                                        const Policy& wanted, const EnforcedLayers& wanted_layers) {
  std::vector<std::string> out;
  auto fixed = [&](const std::string& what, const std::string& from, const std::string& to) {
    if (from != to) {
      out.push_back(what + " cannot change while the tool runs (" + from + " -> " + to +
                    "): it was set up at launch; start a new run");
    }
  };
  fixed("the workspace", running.workspace, wanted.workspace);
  fixed("network", NetworkName(running.network), NetworkName(wanted.network));
  if (running.network == wanted.network && !(running.web == wanted.web)) {
    // The proxy takes a narrower grant for its next connections
    // (supervisor/net/web_proxy.h, SetGrant); without a proxy nothing
    // decides by it.
    if (!NetworkProxied(running.network)) {
      out.push_back(
          std::string("network: the web proxy's settings cannot change under network mode ") +
          NetworkName(running.network) + ", which has no proxy; start a new run");
    } else if (std::string why = WebGrantWidens(running, wanted); !why.empty()) {
      out.push_back(std::move(why));
    }
  }
  fixed("sensitive.delete", SensitiveDeleteName(running.sensitive_delete),
        SensitiveDeleteName(wanted.sensitive_delete));
  fixed("links", LinkModeName(running.links), LinkModeName(wanted.links));
  // Whether a refused change may be asked about as a bypass (policy/bypass.h)
  // is the run's approval wiring, set up at launch.
  fixed("sandbox.allowBypass", running.allow_bypass ? "true" : "false",
        wanted.allow_bypass ? "true" : "false");
  fixed("the private TMPDIR", running.private_tmp ? "on" : "off",
        wanted.private_tmp ? "on" : "off");

  // The kernel's grants: everything the new policy needs must be granted.
  std::size_t uncovered = 0;
  for (const Grant& g : wanted_layers.grants) {
    if (GrantsCover(running_layers.grants, g)) continue;
    if (++uncovered <= 3) {
      out.push_back("the kernel would need to grant " + Describe(g) +
                    ", which this run's Landlock ruleset does not; " + kNeedsNewRun);
    }
  }
  if (uncovered > 3) {
    out.push_back("... and " + std::to_string(uncovered - 3) + " more grants; " + kNeedsNewRun);
  }
  for (const ToolPin& pin : wanted.tools) {
    const bool pinned = std::any_of(running.tools.begin(), running.tools.end(),
                                    [&](const ToolPin& r) { return r.path == pin.path; });
    if (!pinned) {
      out.push_back("the exec allowlist would need " + pin.path + ", which this run did not pin; " +
                    kNeedsNewRun);
    }
  }
  if (wanted_layers.decides_exec && !running_layers.decides_exec) {
    out.push_back(
        "an exec allowlist needs every exec sent to the supervisor, which this run's "
        "seccomp filter does not do; " +
        std::string(kNeedsNewRun));
  }
  // A changed rule is enforced by the supervisor alone: it must see every
  // change the tool makes (links: kernel with sensitive.delete: allow leaves
  // write opens and deletes to Landlock, which keeps the launch's grants).
  if (!running_layers.decides_changes &&
      !SameRules(running, running_layers, wanted, wanted_layers)) {
    out.push_back(
        "this run's seccomp filter leaves some writes and deletes to the kernel "
        "(links: kernel, sensitive.delete: allow), so a changed path rule could not be "
        "enforced; " +
        std::string(kNeedsNewRun));
  }
  return out;
}

}  // namespace cordon::policy
