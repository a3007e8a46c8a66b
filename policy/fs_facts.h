// What the filesystem says about the paths a policy names, gathered by the
// loader (supervisor::GatherFsFacts, supervisor/load/fs_facts.h) and passed
// to Validate: policy/ decides from them and never asks the filesystem.
#pragma once

#include <map>
#include <string>

namespace cordon::policy {

struct PathFacts {
  // statfs(2) f_type is a filesystem through which the kernel is
  // configured (IsKernelControlFs, kernel_interfaces.h).
  bool kernel_control_fs = false;
  // stat(2) (following links) says a block or character device.
  bool device = false;
};

// By path, as the rule names it; a path that does not exist has no entry.
using FsFacts = std::map<std::string, PathFacts>;

}  // namespace cordon::policy
