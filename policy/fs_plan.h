// Turns path rules into the grants a Landlock ruleset can express.
// Landlock only allows, and a rule on a directory covers everything beneath
// it, so a denied path inside an allowed directory is carved out by granting
// the siblings along the way down instead of the directory itself. Entries
// created later beside a denied path stay unreachable (they had no sibling
// rule); the intermediate directories stay listable (READ_DIR), so names in a
// denied directory can be listed but nothing in it read or written.
// A read-only rule inside a read-write one (a protected path such as
// .git/hooks, or --ro inside --rw) is carved the same way: the siblings keep
// read-write, the read-only path and the directories on the way down to it
// are granted read-only. So a directory holding a protected path accepts no
// new entries at the kernel layer (the price of Landlock's allow-only model).
// An unlisted denial (PathRule::unlisted: the run journals) is carved
// without the listing right: the directories on the way down to it get no
// grant of their own, so nothing beneath them can be listed either.
//
// A carved entry that is a symlink is granted by what it resolves to (the
// ruleset opens the grant's path, following links), not by where it sits.
// So a link beside a denied path that leads to it (~/x -> ~/.ssh), into it,
// or to a directory above it (~/y -> ~) would hand the denied path back:
// such an entry is granted nothing (the honest names of what it leads to
// keep their own grants), and so is a link that does not resolve. Other
// links stay granted (/etc/resolv.conf -> /run/..., a toolchain's links).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "policy/policy.h"

namespace cordon::policy {

// What a directory listing says an entry is (readdir's d_type), so the
// ruleset need not stat it; kUnknown when the listing did not say, and for
// rules not found through a listing.
enum class EntryType : unsigned char { kUnknown, kDirectory, kOther };

struct Grant {
  std::string path;
  Access access = Access::kReadOnly;  // never kDenied
  bool executable = false;
  bool list_only = false;  // an intermediate directory on the way to a denial
  EntryType type = EntryType::kUnknown;
};

struct DirEntry {
  std::string name;
  EntryType type = EntryType::kUnknown;
  bool symlink = false;
  // For a symlink: the realpath of what it leads to; empty when it does
  // not resolve (dangling, a loop).
  std::string target;
};

// A carved entry granted nothing because of where its link leads, for the
// log: `denied` is the denied path it would have reached (empty when the
// link does not resolve).
struct SkippedLink {
  std::string path;
  std::string target;
  std::string denied;
};

// Lists the entries of a directory; empty when `dir` is not one.
using DirLister = std::function<std::vector<DirEntry>(const std::string& dir)>;

// `rules` absolute and normalised. Pure apart from `list`. The entries
// skipped for their link's target go to `skipped` when given.
std::vector<Grant> PlanGrants(const std::vector<PathRule>& rules, const DirLister& list,
                              std::vector<SkippedLink>* skipped = nullptr);

// Whether PlanGrants carves a read-write grant of `rules` for a denial: a
// denied path strictly beneath a read-write rule (at any depth, a
// read-only rule between included). The carved directories' entries are
// granted one by one, so an entry the run makes there later has no kernel
// grant although the rules let the tool read it: the supervisor opens it
// on the tool's behalf (the broker: wire::kBrokerOpenFlag), and the
// preload asks it after the kernel refuses such a read. A denial beneath a
// read-only grant alone (~/.cargo/credentials) carves too, but the tool
// makes nothing there: no broker for it.
bool CarvesReads(const std::vector<PathRule>& rules);

// Whether PlanGrants carves a read-write grant of `rules`: a read-only or
// denied path strictly beneath a read-write rule. The carved directory
// itself keeps no right to make or remove entries (its entries are granted
// one by one), so `rm x` or a new file beside the carve-out cannot be left
// to the kernel: the supervisor must perform them (issue 24 item 7).
bool CarvesWrites(const std::vector<PathRule>& rules);

// The real lister is supervisor::ListDir (supervisor/walk/dir_listing.h).

}  // namespace cordon::policy
