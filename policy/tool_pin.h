// The exec allowlist: each tool the policy lists is pinned by the identity
// its binary had when the policy was loaded (dev, ino, size, mtime and the
// SHA-256 of its bytes). At every exec the target is compared again: another
// inode at the path (a replaced binary) or the same inode with other bytes,
// size or mtime (a modified one) is refused with EACCES. Landlock EXECUTE
// rules on the pinned files (see exec_closure.h) make the kernel hold the
// inode part of the pin as well.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "policy/change_watch.h"
#include "policy/result.h"

namespace cordon::policy {

// Executables bigger than this are not pinned (the hash covers every byte).
inline constexpr uint64_t kMaxToolBytes = 1ull << 30;

struct ToolIdentity {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  struct timespec mtime {};
  // Taken before the hash: while quiet, the bytes are the hashed ones and
  // an exec need not hash them again. Null: every exec hashes.
  std::shared_ptr<ChangeWatch> watch;
  // The SHA-256 (hex) of the bytes, hashed on a thread of its own once the
  // file is open, typed and watched: a launch does not wait for it, nor
  // does an exec while `watch` is quiet. Read it with Sha256().
  std::shared_future<Result<std::string>> digest;

  // The digest, waiting for it; an error says why the bytes could not be
  // hashed (a pin without one refuses every exec that needs it).
  Result<std::string> Sha256() const;
};

struct ToolPin {
  std::string name;  // what the policy calls it ("rg")
  std::string path;  // absolute realpath of the binary
  ToolIdentity identity;
};

// Opens `path` (following links, as execve does), requires a regular file
// no larger than kMaxToolBytes, starts watching it for changes and starts
// hashing it. The identity of what the path names at this moment.
Result<ToolIdentity> RecordIdentity(const std::string& path);

// realpath + RecordIdentity: the pin the policy keeps. EINVAL for an empty
// name; the detail says what was wrong.
Result<ToolPin> MakePin(const std::string& name, const std::string& path);

// The cheap part of CheckIdentity: fstat only (inode, size, mtime). For a
// check before launch when the supervisor re-hashes at the exec anyway.
Status CheckMetadata(const ToolPin& pin, int fd);

// Compares the file open at `fd` (the exec target) with the pin: fstat, then
// re-hash from offset 0. EACCES with the reason in `detail` when the inode
// differs (replaced) or the size, mtime or bytes differ (modified).
Status CheckIdentity(const ToolPin& pin, int fd);

struct ExecDecision {
  bool allow = false;
  int err = 0;               // EACCES when refused
  const ToolPin* pin = nullptr;  // the matching pin, if any
  std::string reason;        // one line for the log and the audit record
};

// The supervisor's answer to an execve/execveat of `target` (fstat of the
// file it opened, held as `target_fd`). Without pins every exec the
// filesystem rules allow is allowed (and reported). With pins the target
// must be the very inode of one of them with unchanged bytes; anything else,
// the dynamic loader run directly included, is refused.
ExecDecision DecideExec(const std::vector<ToolPin>& pins, const struct stat& target,
                        int target_fd);

}  // namespace cordon::policy
