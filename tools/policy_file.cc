#include "tools/policy_file.h"

#include <fstream>
#include <sstream>

#include "policy/policy_parser.h"
#include "policy/receipt.h"
#include "supervisor/exec/tool_pin.h"

namespace cordon::tools {

bool ReadSmallFile(const std::string& path, std::string& out) {
  constexpr std::size_t kMaxBytes = 1 << 20;
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out.clear();
  char buf[4096];
  while (f.read(buf, sizeof buf) || f.gcount() > 0) {
    out.append(buf, static_cast<std::size_t>(f.gcount()));
    if (out.size() > kMaxBytes) return false;
  }
  return !f.bad();
}

void LoadPolicyFile(const std::string& path, const std::string& receipt, policy::Policy& p,
                    std::vector<std::string>& errors, const std::string& label) {
  const std::string& file = label.empty() ? path : label;
  std::string bundle;
  if (!ReadSmallFile(path, bundle)) {
    errors.push_back("policy " + file + ": cannot read it (missing, unreadable or over 1 MiB)");
    return;
  }
  if (!receipt.empty()) {
    std::string receipt_text;
    if (!ReadSmallFile(receipt, receipt_text)) {
      errors.push_back("receipt " + receipt + ": cannot read it; nothing is granted");
      return;
    }
    if (std::string why = policy::CheckReceipt(bundle, receipt_text); !why.empty()) {
      errors.push_back("receipt " + receipt + ": " + why + "; nothing is granted");
      return;
    }
  }
  for (const auto& e : policy::ParsePolicy(bundle, p)) {
    errors.push_back(policy::FormatPolicyError(file, e));
  }
  // The parser names the tools; pinning them (open, hash, ELF headers) is
  // the loader's part, reported at the same JSON pointers.
  for (const auto& e : supervisor::PinTools(p)) {
    errors.push_back(policy::FormatPolicyError(file, e));
  }
}

}  // namespace cordon::tools
