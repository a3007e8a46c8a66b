// The one ELF header reader: what the kernel and the dynamic loader will
// need to start a binary, read from its headers with pread (never by
// running it). Used by the preload check (is the loader glibc's?) and by
// the exec closure of pinned tools (which loader, which libraries).
#pragma once

#include <string>
#include <vector>

namespace cordon::supervisor {

struct ElfHeaders {
  bool is_64 = false;          // ELFCLASS64 little-endian (this build's kind)
  std::string interp;          // PT_INTERP; empty for a static binary
  std::vector<std::string> needed;  // DT_NEEDED names (with_needed, 64-bit only)
};

// Reads the ELF executable or shared object open at `fd` (32- or 64-bit).
// With `with_needed`, the DT_NEEDED names of a 64-bit little-endian file
// too (found through PT_DYNAMIC and the PT_LOAD that maps DT_STRTAB; a file
// whose dynamic table cannot be read has none). False with `why` ("not an
// ELF file", "truncated ELF header", "bad PT_INTERP", ...) otherwise.
bool ReadElfHeaders(int fd, bool with_needed, ElfHeaders* out, std::string* why);

}  // namespace cordon::supervisor
