// The admission rule for an existing entry the supervisor is asked to change:
// a symlink, a hard-linked file (nlink > 1) or a special file is refused
// (DESIGN.md, path admission). Shared by the emulator's files.
#pragma once

#include <sys/stat.h>

namespace cordon::supervisor {

// Why `st` may not be changed for the tool, or nullptr when it may.
inline const char* RefuseEntry(const struct stat& st) {
  if (S_ISLNK(st.st_mode)) return "symbolic link";
  if (S_ISREG(st.st_mode) && st.st_nlink > 1) return "hard-linked file (nlink > 1)";
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return "special file";
  return nullptr;
}

}  // namespace cordon::supervisor
