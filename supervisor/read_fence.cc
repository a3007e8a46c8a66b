#include "supervisor/read_fence.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "policy/rule_lookup.h"
#include "supervisor/caps.h"
#include "supervisor/tool_path.h"

namespace cordon::supervisor {

Result<std::unique_ptr<ReadFence>> MakeReadFence(const policy::Policy& p, const std::string& tmp) {
  std::vector<policy::PathRule> readable, executable;
  std::vector<std::string> files;
  std::set<std::pair<dev_t, ino_t>> unlisted_parents;
  const std::vector<policy::PathRule> rules = policy::EffectiveRules(p, tmp);
  for (const auto& r : rules) {
    char real[PATH_MAX];
    struct stat st;
    if (r.unlisted && r.path != "/" &&
        ::stat(r.path.substr(0, std::max<size_t>(r.path.rfind('/'), 1)).c_str(), &st) == 0) {
      unlisted_parents.insert({st.st_dev, st.st_ino});
    }
    if (::realpath(r.path.c_str(), real) == nullptr) {
      // What does not exist yet, kept by NormalisePolicy by its parent's
      // realpath: a denial holds when it comes into being, and a
      // read-write file the run creates (a CI step's output) is read back.
      if (r.access == policy::Access::kDenied) {
        readable.push_back(policy::PathRule::Denied(r.path));
        executable.push_back(policy::PathRule::Denied(r.path));
      } else if (r.access == policy::Access::kReadWrite &&
                 policy::CoveringRule(rules, r.path) == &r) {
        files.push_back(r.path);
      }
      continue;
    }
    if (r.access == policy::Access::kDenied) {
      readable.push_back(policy::PathRule::Denied(real));
      executable.push_back(policy::PathRule::Denied(real));
      continue;
    }
    if (::stat(real, &st) != 0) continue;
    if (!S_ISDIR(st.st_mode)) {
      // A file granted by a rule that a stricter one of its path overrules
      // (rule_lookup.h) is not granted.
      const policy::PathRule* won = policy::CoveringRule(rules, r.path);
      if ((S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)) && won != nullptr &&
          won->access != policy::Access::kDenied) {
        files.push_back(real);  // /dev/null...
      }
      continue;
    }
    readable.push_back(policy::PathRule::ReadOnly(real));
    if (r.executable) executable.push_back(policy::PathRule::ReadOnly(real));
  }
  auto rd = WriteRoots::Open(std::move(readable), p.workspace, {}, /*reads=*/true);
  if (!rd) return rd.error();
  auto ex = WriteRoots::Open(std::move(executable), p.workspace, {}, /*reads=*/true);
  if (!ex) return ex.error();
  return std::make_unique<ReadFence>(ReadFence{std::move(rd.value()), std::move(ex.value()),
                                               std::move(files), std::move(unlisted_parents)});
}

Result<Fd> ReadFence::Open(std::string abs, uint64_t flags, bool follow, Located* where) const {
  // Looked up and opened with the tool's file permissions, not the
  // supervisor's: a capless root tool may not read another user's 0600
  // file or learn what a 0700 directory holds.
  ToolPermissions as_tool;
  if (!as_tool.lowered()) return SysError{EACCES, "cannot lower capabilities"};
  std::string name;
  if (!follow) {
    while (abs.size() > 1 && abs.back() == '/') abs.pop_back();
    size_t slash = abs.rfind('/');  // absolute: always found
    std::string last = abs.substr(slash + 1);
    if (!last.empty() && last != "." && last != "..") {  // a dot entry is no symlink
      name = last;
      abs = slash == 0 ? "/" : abs.substr(0, slash);
    }
  }
  char real[PATH_MAX];
  if (name.empty() && ::realpath(abs.c_str(), real) != nullptr &&
      std::find(files.begin(), files.end(), real) != files.end()) {
    // A single granted file: its canonical path has no symlink left.
    Fd fd(::open(real, static_cast<int>(flags) | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) return Errno("open", real);
    return fd;
  }
  auto loc = Canonical(readable, abs);
  if (!loc) return loc.error();
  std::string rel = loc->rel;
  if (!name.empty()) rel = rel.empty() ? name : rel + "/" + name;
  if (where != nullptr) {
    where->root = loc->root;
    where->rel = rel;
  }
  return WriteRoots::OpenBeneath(*loc->root, rel, flags | (name.empty() ? 0 : O_NOFOLLOW), 0);
}

}  // namespace cordon::supervisor
