#include "policy/exec_closure.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "policy/fd.h"

namespace cordon::policy {
namespace {

// ELF headers of a tool are small; this bounds what one file may make us read.
constexpr std::size_t kMaxTable = 1 << 20;

bool ReadAt(int fd, void* buf, std::size_t len, uint64_t off) {
  auto* p = static_cast<char*>(buf);
  while (len > 0) {
    ssize_t n = ::pread(fd, p, len, static_cast<off_t>(off));
    if (n <= 0) return false;
    p += n;
    len -= static_cast<std::size_t>(n);
    off += static_cast<uint64_t>(n);
  }
  return true;
}

struct ElfDeps {
  std::string interp;
  std::vector<std::string> needed;
};

// Parses a 64-bit little-endian ELF (the only kind this x86-64 build runs).
// Anything else yields no dependencies.
ElfDeps ParseElf(const std::string& path) {
  ElfDeps out;
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));  // a FIFO: not waited on
  if (!fd) return out;
  Elf64_Ehdr eh;
  if (!ReadAt(fd.get(), &eh, sizeof eh, 0) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
      eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum * sizeof(Elf64_Phdr) > kMaxTable) {
    return out;
  }
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  if (!ReadAt(fd.get(), ph.data(), ph.size() * sizeof(Elf64_Phdr), eh.e_phoff)) return out;

  const Elf64_Phdr* dynamic = nullptr;
  for (const Elf64_Phdr& p : ph) {
    if (p.p_type == PT_INTERP && p.p_filesz > 1 && p.p_filesz < PATH_MAX) {
      std::string s(p.p_filesz, '\0');
      if (ReadAt(fd.get(), s.data(), s.size(), p.p_offset)) out.interp = s.c_str();
    } else if (p.p_type == PT_DYNAMIC) {
      dynamic = &p;
    }
  }
  if (dynamic == nullptr || dynamic->p_filesz > kMaxTable) return out;
  std::vector<Elf64_Dyn> dyn(dynamic->p_filesz / sizeof(Elf64_Dyn));
  if (!ReadAt(fd.get(), dyn.data(), dyn.size() * sizeof(Elf64_Dyn), dynamic->p_offset)) return out;

  uint64_t strtab = 0, strsz = 0;
  std::vector<uint64_t> needed;
  for (const Elf64_Dyn& d : dyn) {
    if (d.d_tag == DT_NULL) break;
    if (d.d_tag == DT_STRTAB) strtab = d.d_un.d_ptr;
    if (d.d_tag == DT_STRSZ) strsz = d.d_un.d_val;
    if (d.d_tag == DT_NEEDED) needed.push_back(d.d_un.d_val);
  }
  if (needed.empty() || strsz == 0 || strsz > kMaxTable) return out;
  // DT_STRTAB is a virtual address: find the file offset through PT_LOAD.
  uint64_t str_off = 0;
  bool mapped = false;
  for (const Elf64_Phdr& p : ph) {
    if (p.p_type == PT_LOAD && strtab >= p.p_vaddr && strtab + strsz <= p.p_vaddr + p.p_filesz) {
      str_off = strtab - p.p_vaddr + p.p_offset;
      mapped = true;
      break;
    }
  }
  if (!mapped) return out;
  std::string strings(strsz, '\0');
  if (!ReadAt(fd.get(), strings.data(), strsz, str_off)) return out;
  for (uint64_t off : needed) {
    if (off < strsz) out.needed.emplace_back(strings.c_str() + off);
  }
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
  ElfDeps deps = ParseElf(real);
  if (!deps.interp.empty()) Add(RealRegularFile(deps.interp), seen);
  for (const std::string& lib : deps.needed) Add(FindLibrary(lib), seen);
}

}  // namespace

const std::vector<std::string>& LibraryDirs() {
  static const std::vector<std::string> dirs = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                                                "/lib64", "/usr/lib64", "/lib", "/usr/lib"};
  return dirs;
}

std::vector<std::string> ExecClosure(const std::vector<ToolPin>& pins) {
  std::set<std::string> seen;
  for (const ToolPin& pin : pins) Add(RealRegularFile(pin.path), seen);
  return {seen.begin(), seen.end()};
}

}  // namespace cordon::policy
