#include "supervisor/write_roots.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "policy/path_admission.h"
#include "policy/policy.h"
#include "supervisor/uapi.h"

namespace cordon::supervisor {

bool NormaliseNoDotDot(const std::string& in, std::string& out) {
  char buf[policy::kAdmissionMaxPath];
  long n = policy::NormalizePath(in, nullptr, buf);
  if (n < 0) return false;
  out.assign(buf, static_cast<size_t>(n));
  return true;
}

Result<WriteRoots> WriteRoots::Open(std::vector<policy::PathRule> rules,
                                    const std::string& workspace,
                                    const std::vector<std::string>& shared, bool reads) {
  WriteRoots r;
  r.reads_ = reads;
  const size_t first_shared = rules.size();
  for (const auto& p : shared) rules.push_back({p, policy::Access::kReadWrite, false, "shared"});
  r.rules_ = std::move(rules);
  r.rule_root_.assign(r.rules_.size(), -1);
  for (size_t i = 0; i < r.rules_.size(); ++i) {
    const policy::PathRule& rule = r.rules_[i];
    if (!r.Grants(rule.access)) continue;
    const bool is_shared = i >= first_shared;
    struct stat st;
    // A file a read-write rule names that does not exist yet may be made
    // by the run (a CI step's output file): its directory is held.
    const bool missing = ::stat(rule.path.c_str(), &st) != 0;
    if (missing && (errno != ENOENT || reads || is_shared)) continue;
    WriteRoot root;
    const bool file = missing || S_ISREG(st.st_mode);
    if (file && rule.replaceable && rule.path != "/") {
      // One root for the replaceable grants of a directory: a rename
      // between two of them stays within it.
      const std::string dir = rule.path.substr(0, std::max<size_t>(rule.path.rfind('/'), 1));
      long shared_root = -1;
      for (size_t k = 0; k < r.roots_.size(); ++k) {
        if (r.roots_[k].entries_may_change && r.roots_[k].path == dir) {
          shared_root = static_cast<long>(k);
        }
      }
      if (shared_root >= 0) {
        r.rule_root_[i] = shared_root;
        continue;
      }
    }
    if (!missing && S_ISDIR(st.st_mode)) {
      root.path = rule.path;
      root.workspace = rule.path == workspace;
      root.disposable = rule.disposable;
      root.own_entries_only = is_shared;
    } else if ((missing || S_ISREG(st.st_mode)) && rule.path != "/") {
      size_t slash = rule.path.rfind('/');
      root.path = slash == 0 ? "/" : rule.path.substr(0, slash);
      root.only_entry = rule.path.substr(slash + 1);
      root.entries_may_change = rule.replaceable;
    } else {
      continue;  // a device (/dev/null): opened by the emulator as it is
    }
    root.fd = Fd(::open(root.path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root.fd && missing) continue;  // its directory went too
    if (!root.fd) return Errno(is_shared ? "open shared directory" : "open write root", root.path);
    r.rule_root_[i] = static_cast<long>(r.roots_.size());
    r.roots_.push_back(std::move(root));
  }
  for (const policy::PathRule& x : r.rules_) {
    if (r.Grants(x.access)) continue;
    const WriteRoot* root = nullptr;
    for (const auto& w : r.roots_) {
      if (w.only_entry.empty() && policy::IsWithin(x.path, w.path) && x.path != w.path) root = &w;
    }
    if (root == nullptr) continue;
    // Pin the path and every directory between it and the root.
    for (std::string cur = x.path; cur.size() > root->path.size();
         cur = cur.substr(0, cur.rfind('/'))) {
      struct stat st;
      if (::lstat(cur.c_str(), &st) == 0) r.pinned_.insert({st.st_dev, st.st_ino});
    }
  }
  return r;
}

bool WriteRoots::IsPinned(dev_t dev, ino_t ino) const { return pinned_.count({dev, ino}) > 0; }

Result<Located> WriteRoots::Locate(const std::string& abs_path, Change change) const {
  policy::Covered c = policy::CoverPath(rules_, abs_path, reads_);
  if (c.err != 0) {
    // The deny rule's own path says which rule; otherwise the path itself,
    // which a grant would name (policy/refusal_hint.h).
    const bool denied = c.rule != nullptr && c.rule->access == policy::Access::kDenied;
    return SysError{c.err, c.why, denied ? c.rule->path : c.path.empty() ? abs_path : c.path};
  }
  const policy::PathRule* rule = c.rule;
  const std::string& norm = c.path;
  long index = rule_root_[static_cast<size_t>(rule - rules_.data())];
  if (index < 0) return SysError{EACCES, "no directory held for the rule", rule->path};
  const WriteRoot* best = &roots_[static_cast<size_t>(index)];
  if (!best->only_entry.empty() && change == Change::kEntry && !best->entries_may_change) {
    return SysError{EACCES, policy::kSingleFileGrantRule, rule->path};
  }
  if (best->entries_may_change && norm.size() != rule->path.size()) {
    return SysError{EACCES, "beneath a replaceable file grant", rule->path};
  }
  Located loc;
  loc.root = best;
  loc.rel = norm.size() == best->path.size() ? ""
            : best->path == "/"              ? norm.substr(1)
                                             : norm.substr(best->path.size() + 1);
  if (best->own_entries_only && loc.rel.find('/') != std::string::npos) {
    return SysError{EACCES, "below the top level of a shared directory", best->path};
  }
  if (!loc.rel.empty()) {
    auto slash = loc.rel.rfind('/');
    loc.parent_rel = slash == std::string::npos ? "." : loc.rel.substr(0, slash);
    loc.name = slash == std::string::npos ? loc.rel : loc.rel.substr(slash + 1);
  } else {
    loc.parent_rel = ".";
  }
  return loc;
}

Result<Fd> WriteRoots::OpenBeneath(int root_fd, const std::string& rel, uint64_t flags,
                                   uint64_t mode) {
  uapi::OpenHow how{flags | O_CLOEXEC, mode,
                    uapi::kResolveBeneath | uapi::kResolveNoSymlinks | uapi::kResolveNoMagiclinks |
                        uapi::kResolveNoXdev};
  long fd = ::syscall(uapi::kNrOpenat2, root_fd, rel.empty() ? "." : rel.c_str(), &how,
                      sizeof how);
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP || err == EXDEV) return SysError{EACCES, "symlink or mount on the way", rel};
    return SysError{err, "openat2", rel};
  }
  return Fd(static_cast<int>(fd));
}

Result<Fd> WriteRoots::OpenParent(const Located& loc) {
  return OpenBeneath(*loc.root, loc.parent_rel, O_PATH | O_DIRECTORY, 0);
}

}  // namespace cordon::supervisor
