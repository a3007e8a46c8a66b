#include "policy/tool_pin.h"

#include <cerrno>
#include <set>

namespace cordon::policy {

Result<std::string> ToolIdentity::Sha256() const {
  if (!bytes) return SysError{ENODATA, "sha256", "the pin was never hashed"};
  return bytes->Sha256();
}

std::optional<SysError> CheckToolSpec(const std::string& name, const std::string& path) {
  if (name.empty()) return SysError{EINVAL, "pin", "tool name is empty (NAME=PATH)"};
  if (path.empty() || path[0] != '/') {
    return SysError{EINVAL, "pin", "tool '" + name + "' path must be absolute: '" + path + "'"};
  }
  return std::nullopt;
}

std::vector<std::string> ExecFiles(const std::vector<ToolPin>& pins) {
  std::set<std::string> files;
  for (const ToolPin& pin : pins) files.insert(pin.exec_files.begin(), pin.exec_files.end());
  return {files.begin(), files.end()};
}

}  // namespace cordon::policy
