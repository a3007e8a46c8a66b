// Files the kernel read grant leaves out of the workspace whatever rule
// covers them (issue 27 item 8; seed 002: "symbolic links, hard-linked
// files, special files ... are rejected"): a regular file with more than
// one name, whose other name may lie outside the workspace where Landlock,
// which grants by name, cannot see it; and device nodes and FIFOs (a
// chroot's dev/ inside the workspace). Sockets are listed by the scan and
// kept: a connect to one is the supervisor's decision, not the grant's.
//
// The supervisor's launch scan (supervisor/walk/launch_scan.h) lists every
// such entry of the workspace with the facts below; RefusedEntries decides,
// without I/O, which of them are carved out (Policy::refused_entries,
// denied rules in EffectiveRules). Links cannot be made into the workspace
// during a run, so what the scan saw at launch is the whole answer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cordon::policy {

// `hardLinks` in a policy file: kRefuse (the default) carves every regular
// file with more than one name; kInsideWorkspace keeps those whose every
// name the scan found in the workspace (names found == st_nlink).
enum class HardLinks { kRefuse, kInsideWorkspace };
const char* HardLinksName(HardLinks h);

enum class ScannedKind { kLinkedFile, kCharDevice, kBlockDevice, kFifo, kSocket };

// One entry of the workspace the scan found that is not a plain file,
// directory or symlink, or a regular file with st_nlink > 1.
struct ScannedEntry {
  std::string path;  // absolute, no symlink on the way
  ScannedKind kind = ScannedKind::kLinkedFile;
  std::uint64_t dev = 0, ino = 0;
  std::uint64_t nlink = 1;
};

struct RefusedEntry {
  std::string path;
  std::string why;  // one line, for explain: "hard link: 2 names, 1 in the workspace"
  // A hard link whose every name was found in the workspace: kept under
  // HardLinks::kInsideWorkspace.
  bool names_inside = false;
  // The source of its denied rule (kRefusedEntrySource or kInsideLinkSource).
  const char* Source() const;
};

// Which entries the kernel grant leaves out, sorted by path.
std::vector<RefusedEntry> RefusedEntries(HardLinks mode, const std::vector<ScannedEntry>& entries);

// The other names in the workspace of every regular match (`matches`:
// absolute paths the deny globs matched) that has more than one name:
// they read the same file, so they are denied with it.
std::vector<std::string> OtherNamesOfMatches(const std::vector<std::string>& matches,
                                             const std::vector<ScannedEntry>& entries);

}  // namespace cordon::policy
