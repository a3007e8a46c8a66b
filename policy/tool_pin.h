// The exec allowlist as the policy holds it: each tool by name and path,
// and, once the loader (supervisor/exec/tool_pin.h) has pinned it, the
// identity its binary had then (dev, ino, size, mtime, SHA-256) and the
// files it needs EXECUTE on. The parser only names tools; opening, hashing
// and reading ELF headers happen outside policy/.
#pragma once

#include <sys/types.h>
#include <time.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace cordon::policy {

// Executables bigger than this are not pinned (the hash covers every byte).
inline constexpr uint64_t kMaxToolBytes = 1ull << 30;

// What the loader keeps about a pinned binary's bytes: its SHA-256 (hashed
// in the background) and whether the file has stayed unchanged since before
// it was hashed. Implemented by supervisor/exec/tool_pin.cc.
class PinnedBytes {
 public:
  virtual ~PinnedBytes() = default;
  // Whether a change watch could be had (a local filesystem).
  virtual bool Watched() const = 0;
  // True while watched and no change has been seen. Once false, false for
  // good. Thread-safe.
  virtual bool Quiet() const = 0;
  // The digest, waiting for it; an error says why the bytes could not be
  // hashed.
  virtual Result<std::string> Sha256() const = 0;
};

struct ToolIdentity {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  struct timespec mtime {};
  // Null until pinned.
  std::shared_ptr<const PinnedBytes> bytes;

  // The digest, waiting for it; an error when the tool was never pinned or
  // its bytes could not be hashed (a pin without one refuses every exec
  // that needs it).
  Result<std::string> Sha256() const;
};

struct ToolPin {
  std::string name;  // what the policy calls it ("rg")
  std::string path;  // as named; the absolute realpath of the binary once pinned
  ToolIdentity identity;
  // The binary, its loader and its libraries (the loader's ExecClosure):
  // the only files EffectiveRules grants EXECUTE on once tools are pinned.
  std::vector<std::string> exec_files;
  std::string source;  // where the policy named it (a JSON pointer), for errors
};

// What is wrong with NAME and PATH as written (empty name, relative path),
// with the message the loader would give; nullopt when they may be pinned.
std::optional<SysError> CheckToolSpec(const std::string& name, const std::string& path);

// The union of the pins' exec_files, sorted and deduplicated.
std::vector<std::string> ExecFiles(const std::vector<ToolPin>& pins);

}  // namespace cordon::policy
