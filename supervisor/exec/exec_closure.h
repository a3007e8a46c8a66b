// The files a pinned tool needs EXECUTE on: the binary itself, its dynamic
// loader (PT_INTERP, opened by the kernel with exec intent, so Landlock
// checks EXECUTE on it) and the shared libraries it maps (DT_NEEDED,
// transitively). Found by parsing the ELF headers, never by running the
// loader, and resolved in the standard multiarch directories only (no
// ld.so.cache, no RPATH/RUNPATH, no LD_LIBRARY_PATH: the scrubbed
// environment of a confined tool has none).
#pragma once

#include <string>
#include <vector>

#include "policy/tool_pin.h"

namespace cordon::supervisor {

using policy::ToolPin;

// The directories DT_NEEDED names are looked up in, in order.
const std::vector<std::string>& LibraryDirs();

// Sorted, deduplicated realpaths. A static binary gives itself; a file that
// is not ELF (a script) gives itself too. Libraries that cannot be found
// are left out (the loader will fail to start the tool, which is a refusal).
std::vector<std::string> ExecClosure(const std::vector<ToolPin>& pins);
// The same for one binary (MakePin keeps it in ToolPin::exec_files).
std::vector<std::string> ExecClosure(const std::string& binary);

}  // namespace cordon::supervisor
