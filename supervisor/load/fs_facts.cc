#include "supervisor/load/fs_facts.h"

#include <sys/stat.h>
#include <sys/statfs.h>

#include "policy/kernel_interfaces.h"

namespace cordon::supervisor {
namespace {

void Gather(const std::string& path, policy::FsFacts& facts) {
  if (path.empty() || facts.count(path) != 0) return;
  policy::PathFacts f;
  bool known = false;
  struct statfs fs;
  if (::statfs(path.c_str(), &fs) == 0) {
    f.kernel_control_fs = policy::IsKernelControlFs(static_cast<long>(fs.f_type));
    known = true;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    f.device = S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode);
    known = true;
  }
  if (known) facts.emplace(path, f);
}

}  // namespace

policy::FsFacts GatherFsFacts(const policy::Policy& p) {
  policy::FsFacts facts;
  Gather(p.workspace, facts);
  for (const policy::PathRule& r : p.paths) Gather(r.path, facts);
  return facts;
}

}  // namespace cordon::supervisor
