// Pinning the exec allowlist (policy/tool_pin.h): each tool the policy
// lists is pinned by the identity its binary had when the policy was loaded
// (dev, ino, size, mtime and the SHA-256 of its bytes). At every exec the
// target is compared again: another inode at the path (a replaced binary) or
// the same inode with other bytes, size or mtime (a modified one) is refused
// with EACCES. Landlock EXECUTE rules on the pinned files (see
// exec_closure.h) make the kernel hold the inode part of the pin as well.
#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

#include "base/result.h"
#include "policy/policy_parser.h"
#include "policy/tool_pin.h"

namespace cordon::supervisor {

using policy::ToolIdentity;
using policy::ToolPin;

// Opens `path` (following links, as execve does), requires a regular file
// no larger than policy::kMaxToolBytes, starts watching it for changes and
// starts hashing it. The identity of what the path names at this moment.
Result<ToolIdentity> RecordIdentity(const std::string& path);

// realpath + RecordIdentity + ExecClosure: the pin the policy keeps. EINVAL
// for an empty name or a relative path; the detail says what was wrong.
Result<ToolPin> MakePin(const std::string& name, const std::string& path);

// Pins every tool of `p` the parser named (ToolPin::source says where): the
// loader's half of the `tools` section. A tool that cannot be pinned is
// dropped and reported at its JSON pointer, as a parse error would be.
std::vector<policy::PolicyError> PinTools(policy::Policy& p);

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

}  // namespace cordon::supervisor
