#include "policy/terminal.h"

#include <cstring>

namespace cordon::policy {

TerminalPath ParseTerminalPath(const char* path) {
  TerminalPath t;
  if (path == nullptr) return t;
  if (std::strcmp(path, "/dev/ptmx") == 0 || std::strcmp(path, "/dev/pts/ptmx") == 0) {
    t.kind = TerminalKind::kMaster;
    return t;
  }
  if (std::strcmp(path, "/dev/tty") == 0) {
    t.kind = TerminalKind::kControlling;
    return t;
  }
  constexpr const char kPts[] = "/dev/pts/";
  if (std::strncmp(path, kPts, sizeof kPts - 1) != 0) return t;
  const char* n = path + sizeof kPts - 1;
  if (*n < '0' || *n > '9' || (n[0] == '0' && n[1] != 0)) return t;
  long v = 0;
  for (; *n != 0; ++n) {
    if (*n < '0' || *n > '9') return t;
    v = v * 10 + (*n - '0');
    if (v > (1L << 20)) return t;  // beyond any pty number (kernel.pty.max)
  }
  t.kind = TerminalKind::kSubsidiary;
  t.number = static_cast<int>(v);
  return t;
}

const char* TerminalRefusal(const TerminalPath& t, bool made_in_run, bool master_held) {
  switch (t.kind) {
    case TerminalKind::kNone: return "not a pseudo-terminal";
    case TerminalKind::kMaster: return nullptr;
    case TerminalKind::kControlling: return "the controlling terminal, unresolved";
    case TerminalKind::kSubsidiary:
      if (!made_in_run) return "a terminal this run did not make (the caller's)";
      if (!master_held) return "a terminal whose master the tool no longer holds";
      return nullptr;
  }
  return "unknown terminal";
}

}  // namespace cordon::policy
