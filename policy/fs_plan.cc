#include "policy/fs_plan.h"

#include <algorithm>
#include <memory>

namespace cordon::policy {
namespace {

std::string Join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// A path inside an allowed rule that the rule must not fully cover: a denial
// (nothing granted) or a read-only rule inside a read-write one (granted
// read-only: protected paths, --ro inside --rw).
struct Hole {
  const std::string* path;
  bool denied;
  bool unlisted = false;  // a denial nothing may list into (PathRule::unlisted)
};

// One PlanGrants call: its lister, every denial in force (a link may lead
// to one far from the rule being carved), the grants so far, the skips.
struct Plan {
  const DirLister& list;
  const std::vector<const std::string*>& denied;  // every denial in force
  std::vector<Grant>& out;
  std::vector<SkippedLink>* skipped;
};

// The denied path a symlink entry leading to `target` would grant: the
// target is it, lies beneath it, or holds it. Null when none.
const std::string* DeniedThroughLink(const std::string& target,
                                     const std::vector<const std::string*>& denied) {
  for (const std::string* d : denied) {
    if (IsWithin(target, *d) || IsWithin(*d, target)) return d;
  }
  return nullptr;
}

// Whether a symlink entry must be granted nothing (SkippedLink noted).
bool SkipLink(const std::string& child, const DirEntry& entry, const Plan& plan) {
  if (!entry.symlink) return false;
  const std::string* d = nullptr;
  if (!entry.target.empty()) {
    d = DeniedThroughLink(entry.target, plan.denied);
    if (d == nullptr) return false;
  }
  if (plan.skipped != nullptr) {
    plan.skipped->push_back({child, entry.target, d != nullptr ? *d : std::string()});
  }
  return true;
}

// Grants `dir` minus the holes beneath it. The directory itself gets only
// what cannot leak into a hole, since a Landlock right on a directory covers
// its whole hierarchy: READ_DIR when something below is denied, read-only
// when something below is merely read-only. Its entries get the rule's
// access one by one; new entries created beside a hole later get nothing.
void Expand(const PathRule& allowed, const std::string& dir, const std::vector<Hole>& holes,
            const Plan& plan) {
  std::vector<Grant>& out = plan.out;
  bool any_denied = std::any_of(holes.begin(), holes.end(), [](const Hole& h) { return h.denied; });
  bool unlisted = std::any_of(holes.begin(), holes.end(), [](const Hole& h) { return h.unlisted; });
  if (unlisted) {
    // No right at all: READ_DIR here would reach the unlisted hole.
  } else if (any_denied) {
    out.push_back({dir, allowed.access, false, true, EntryType::kDirectory});
  } else {
    out.push_back({dir, Access::kReadOnly, allowed.executable, false, EntryType::kDirectory});
  }
  for (const DirEntry& entry : plan.list(dir)) {
    std::string child = Join(dir, entry.name);
    std::vector<Hole> below;
    bool is_denied = false, is_read_only = false;
    for (const Hole& h : holes) {
      if (*h.path == child) (h.denied ? is_denied : is_read_only) = true;
      else if (IsWithin(*h.path, child)) below.push_back(h);
    }
    if (is_denied || SkipLink(child, entry, plan)) continue;
    PathRule rule = allowed;
    if (is_read_only) {
      // Only denials still matter beneath a read-only hole.
      rule.access = Access::kReadOnly;
      std::erase_if(below, [](const Hole& h) { return !h.denied; });
    }
    if (below.empty()) {
      out.push_back({child, rule.access, rule.executable, false, entry.type});
    } else {
      Expand(rule, child, below, plan);
    }
  }
}

}  // namespace

std::vector<Grant> PlanGrants(const std::vector<PathRule>& rules, const DirLister& list,
                              std::vector<SkippedLink>* skipped) {
  std::vector<const std::string*> denied;
  for (const PathRule& r : rules) {
    if (r.access == Access::kDenied) denied.push_back(&r.path);
  }
  std::vector<Grant> out;
  const Plan plan{list, denied, out, skipped};
  for (const PathRule& r : rules) {
    if (r.access == Access::kDenied) continue;
    // A stricter rule of the same path wins the tie (rule_lookup.h): the
    // grant is left to it. A denial of an ancestor carves this rule's path
    // out of that ancestor's grant, so the more specific rule stands.
    bool covered = std::any_of(rules.begin(), rules.end(), [&](const PathRule& o) {
      return o.path == r.path && Strictness(o.access) > Strictness(r.access);
    });
    if (covered) continue;
    std::vector<Hole> below;
    for (const PathRule& d : rules) {
      if (d.access == Access::kDenied && IsWithin(d.path, r.path) && d.path != r.path) {
        below.push_back({&d.path, true, d.unlisted});
      }
    }
    if (r.access == Access::kReadWrite) {
      for (const PathRule& o : rules) {
        if (o.access == Access::kReadOnly && o.path != r.path && IsWithin(o.path, r.path)) {
          below.push_back({&o.path, false});
        }
      }
    }
    if (below.empty()) {
      out.push_back({r.path, r.access, r.executable, false});
    } else {
      Expand(r, r.path, below, plan);
    }
  }
  return out;
}

namespace {

// A rule of an access in `holes` strictly beneath a rule of an access in
// `grants`: a hole PlanGrants carves out of that grant.
template <class Holes, class Grants>
bool Carves(const std::vector<PathRule>& rules, const Holes& holes, const Grants& grants) {
  for (const PathRule& h : rules) {
    if (!holes(h.access)) continue;
    for (const PathRule& r : rules) {
      if (grants(r.access) && r.path != h.path && IsWithin(h.path, r.path)) return true;
    }
  }
  return false;
}

}  // namespace

bool CarvesReads(const std::vector<PathRule>& rules) {
  return Carves(
      rules, [](Access a) { return a == Access::kDenied; },
      [](Access a) { return a == Access::kReadWrite; });
}

bool CarvesWrites(const std::vector<PathRule>& rules) {
  return Carves(
      rules, [](Access a) { return a != Access::kReadWrite; },
      [](Access a) { return a == Access::kReadWrite; });
}

}  // namespace cordon::policy
