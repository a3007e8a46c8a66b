// JSON Lines, as the audit log and `cordon approve --list` write them: one
// JSON value per newline-terminated line, parsed in order.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace cordon::testing {

inline std::vector<nlohmann::json> JsonLines(const std::string& text) {
  std::vector<nlohmann::json> out;
  for (size_t pos = 0, nl; (nl = text.find('\n', pos)) != std::string::npos; pos = nl + 1) {
    out.push_back(nlohmann::json::parse(text.substr(pos, nl - pos)));
  }
  return out;
}

}  // namespace cordon::testing
