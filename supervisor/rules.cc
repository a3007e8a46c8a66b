#include "supervisor/rules.h"

#include <fcntl.h>

#include <cerrno>

#include "policy/deny_glob.h"
#include "policy/rule_lookup.h"

namespace cordon::supervisor {

Result<std::shared_ptr<const Rules>> MakeRules(const policy::Policy& p, const RulesPlace& place) {
  auto roots =
      WriteRoots::Open(policy::EffectiveRules(p, place.tmp), p.workspace, place.shared_dirs);
  if (!roots) return SysError{roots.error().err, "write roots", Describe(roots.error())};
  auto r = std::make_shared<Rules>(Rules{std::move(roots.value())});
  r->network = p.network;
  r->sensitive_delete_allowed = p.sensitive_delete == policy::SensitiveDelete::kAllow;
  r->protected_patterns = p.protected_patterns;
  r->deny_globs = p.deny_globs;
  r->deny_globs_workspace = p.workspace;
  r->deny_globs_follow_parents = policy::DenyGlobsFollowParents(p.deny_globs);
  r->pins = p.tools;
  if (p.allow_bypass) {
    bool held = false;
    for (const WriteRoot& root : r->roots.roots()) held = held || root.workspace;
    if (!held) {
      auto ws = std::make_shared<WriteRoot>();
      ws->path = p.workspace;
      ws->workspace = true;
      ws->fd = Fd(::open(p.workspace.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
      if (!ws->fd) return SysError{errno, "open workspace", p.workspace};
      r->bypass_workspace = std::move(ws);
    }
  }
  return std::shared_ptr<const Rules>(std::move(r));
}

std::shared_ptr<const Rules> LiveRules::Snapshot() const {
  if (guarded_.load()) return nullptr;
  return current_.load();
}

void LiveRules::Start(std::shared_ptr<const Rules> first, LaunchedLayers layers) {
  layers_ = std::move(layers);
  {
    std::lock_guard<std::mutex> l(kept_mu_);
    kept_.push_back(first);
  }
  current_.store(std::move(first));
  started_.store(true);
}

void LiveRules::Guard() {
  reload_mu_.lock();
  guarded_.store(true);
}

void LiveRules::Install(std::shared_ptr<const Rules> next) {
  {
    std::lock_guard<std::mutex> l(kept_mu_);
    kept_.push_back(next);
  }
  current_.store(std::move(next));
  guarded_.store(false);
  reload_mu_.unlock();
}

void LiveRules::Lift() {
  guarded_.store(false);
  reload_mu_.unlock();
}

}  // namespace cordon::supervisor
