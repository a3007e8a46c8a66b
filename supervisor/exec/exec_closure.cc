#include "supervisor/exec/exec_closure.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>

#include "base/fd.h"
#include "supervisor/exec/elf_reader.h"

namespace cordon::supervisor {
namespace {

// The loader and libraries a binary names; none when it is not a 64-bit
// little-endian ELF file (the only kind this x86-64 build runs).
ElfHeaders ReadDeps(const std::string& path) {
  ElfHeaders out;
  std::string why;
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));  // a FIFO: not waited on
  if (!fd || !ReadElfHeaders(fd.get(), /*with_needed=*/true, &out, &why) || !out.is_64) return {};
  return out;
}

std::string RealRegularFile(const std::string& path) {
  char buf[PATH_MAX];
  struct stat st;
  if (::realpath(path.c_str(), buf) == nullptr || ::stat(buf, &st) != 0 || !S_ISREG(st.st_mode)) {
    return {};
  }
  return buf;
}

std::string FindLibrary(const std::string& name) {
  // A name with a slash is a path (as the loader treats it).
  if (name.find('/') != std::string::npos) return RealRegularFile(name);
  for (const std::string& dir : LibraryDirs()) {
    if (std::string p = RealRegularFile(dir + "/" + name); !p.empty()) return p;
  }
  return {};
}

void Add(const std::string& real, std::set<std::string>& seen) {
  if (real.empty() || !seen.insert(real).second) return;
  ElfHeaders deps = ReadDeps(real);
  if (!deps.interp.empty()) Add(RealRegularFile(deps.interp), seen);
  for (const std::string& lib : deps.needed) Add(FindLibrary(lib), seen);
}

}  // namespace

const std::vector<std::string>& LibraryDirs() {
  static const std::vector<std::string> dirs = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                                                "/lib64", "/usr/lib64", "/lib", "/usr/lib"};
  return dirs;
}

std::vector<std::string> ExecClosure(const std::string& binary) {
  std::set<std::string> seen;
  Add(RealRegularFile(binary), seen);
  return {seen.begin(), seen.end()};
}

std::vector<std::string> ExecClosure(const std::vector<ToolPin>& pins) {
  std::set<std::string> seen;
  for (const ToolPin& pin : pins) Add(RealRegularFile(pin.path), seen);
  return {seen.begin(), seen.end()};
}

}  // namespace cordon::supervisor
