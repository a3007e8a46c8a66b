#include "supervisor/exec/elf_reader.h"

#include <elf.h>
#include <limits.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace cordon::supervisor {
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

template <class Ehdr, class Phdr>
bool ReadProgramHeaders(int fd, std::vector<Phdr>* ph, std::string* why) {
  Ehdr eh;
  if (!ReadAt(fd, &eh, sizeof eh, 0)) return *why = "truncated ELF header", false;
  if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) return *why = "not an ELF executable", false;
  if (eh.e_phentsize != sizeof(Phdr) || eh.e_phnum > 512) return *why = "bad program headers", false;
  ph->resize(eh.e_phnum);
  if (!ReadAt(fd, ph->data(), ph->size() * sizeof(Phdr), eh.e_phoff)) {
    return *why = "truncated program headers", false;
  }
  return true;
}

template <class Phdr>
bool ReadInterp(int fd, const std::vector<Phdr>& ph, std::string* interp, std::string* why) {
  for (const Phdr& p : ph) {
    if (p.p_type != PT_INTERP) continue;
    if (p.p_filesz == 0 || p.p_filesz > PATH_MAX) return *why = "bad PT_INTERP", false;
    std::string s(p.p_filesz, '\0');
    if (!ReadAt(fd, s.data(), s.size(), p.p_offset)) return *why = "truncated PT_INTERP", false;
    s.resize(strnlen(s.c_str(), s.size()));
    *interp = std::move(s);
    return true;
  }
  interp->clear();
  return true;
}

// DT_NEEDED of a 64-bit file; empty when its dynamic table cannot be read.
std::vector<std::string> ReadNeeded(int fd, const std::vector<Elf64_Phdr>& ph) {
  const Elf64_Phdr* dynamic = nullptr;
  for (const Elf64_Phdr& p : ph) {
    if (p.p_type == PT_DYNAMIC) dynamic = &p;
  }
  if (dynamic == nullptr || dynamic->p_filesz > kMaxTable) return {};
  std::vector<Elf64_Dyn> dyn(dynamic->p_filesz / sizeof(Elf64_Dyn));
  if (!ReadAt(fd, dyn.data(), dyn.size() * sizeof(Elf64_Dyn), dynamic->p_offset)) return {};

  uint64_t strtab = 0, strsz = 0;
  std::vector<uint64_t> needed;
  for (const Elf64_Dyn& d : dyn) {
    if (d.d_tag == DT_NULL) break;
    if (d.d_tag == DT_STRTAB) strtab = d.d_un.d_ptr;
    if (d.d_tag == DT_STRSZ) strsz = d.d_un.d_val;
    if (d.d_tag == DT_NEEDED) needed.push_back(d.d_un.d_val);
  }
  if (needed.empty() || strsz == 0 || strsz > kMaxTable) return {};
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
  if (!mapped) return {};
  std::string strings(strsz, '\0');
  if (!ReadAt(fd, strings.data(), strsz, str_off)) return {};
  std::vector<std::string> out;
  for (uint64_t off : needed) {
    if (off < strsz) out.emplace_back(strings.c_str() + off);
  }
  return out;
}

}  // namespace

bool ReadElfHeaders(int fd, bool with_needed, ElfHeaders* out, std::string* why) {
  *out = {};
  unsigned char ident[EI_NIDENT] = {};
  ssize_t n = ::pread(fd, ident, sizeof ident, 0);
  if (n != EI_NIDENT || std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    return *why = "not an ELF file", false;
  }
  if (ident[EI_CLASS] == ELFCLASS32) {
    std::vector<Elf32_Phdr> ph;
    return ReadProgramHeaders<Elf32_Ehdr>(fd, &ph, why) && ReadInterp(fd, ph, &out->interp, why);
  }
  if (ident[EI_CLASS] != ELFCLASS64) return *why = "unknown ELF class", false;
  std::vector<Elf64_Phdr> ph;
  if (!ReadProgramHeaders<Elf64_Ehdr>(fd, &ph, why) || !ReadInterp(fd, ph, &out->interp, why)) {
    return false;
  }
  out->is_64 = ident[EI_DATA] == ELFDATA2LSB;
  if (with_needed && out->is_64) out->needed = ReadNeeded(fd, ph);
  return true;
}

}  // namespace cordon::supervisor
