#include "base/result.h"

#include <cstring>

namespace cordon {

std::string Describe(const SysError& e) {
  std::string s = e.op;
  if (!e.detail.empty()) s += " " + e.detail;
  if (e.err != 0) {
    s += ": ";
    s += std::strerror(e.err);
  }
  return s;
}

}  // namespace cordon
