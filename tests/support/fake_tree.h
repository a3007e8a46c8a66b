// Test support: a fake directory tree for policy::PlanGrants (pure tests of
// the Landlock plan and of what depends on it).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "policy/fs_plan.h"

namespace cordon::testing {

// dir -> entries (their type unknown, as for a filesystem without d_type).
inline policy::DirLister FakeTree(std::map<std::string, std::vector<std::string>> t) {
  return [t](const std::string& d) {
    std::vector<policy::DirEntry> out;
    if (auto it = t.find(d); it != t.end()) {
      for (const std::string& name : it->second) out.push_back({name});
    }
    return out;
  };
}

}  // namespace cordon::testing
