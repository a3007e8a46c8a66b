// Lexical path admission: the one rule both the preload (before dispatch,
// inside the tool) and the supervisor (on notified syscalls) apply to a path
// as the tool spelled it.
//
//   1. Malformed input is refused first: an empty path (ENOENT, as the
//      kernel says), an embedded NUL (EINVAL), a path or joined path of
//      PATH_MAX bytes or more (ENAMETOOLONG, as the kernel says).
//   2. A raw ".." segment after a name is not normalised away: "a" may be
//      a symlink whose parent is elsewhere (a POSIX physical-parent alias,
//      which the seed refuses). A mutation spelled so is refused (EACCES),
//      even when "a/../b" would land inside the workspace; a read is left
//      to the kernel, whose Landlock grants are on the physical inodes
//      (compilers, git submodules and build files spell paths so). cordon's
//      own file tools refuse every ".." in a path they are handed
//      (HasParentSegment).
//   3. A relative path is joined to its base (the cwd or the dirfd's path),
//      "." segments and duplicate slashes are dropped. Its leading ".."
//      segments ("../include", "../../x") climb the base: the base is the
//      kernel's physical name of that directory, so its lexical parent is
//      the one the kernel walks to, and there is no alias to refuse.
//   4. The rule that covers the result classifies it (the one rule lookup,
//      rule_lookup.h: the most specific rule, the stricter on a tie). Reads need any rule but kDenied; mutations need a
//      read-write rule (the workspace under workspace-write, declared rw
//      paths, the private TMPDIR). Anything else is EACCES.
//
// Lexical only: symlinks, hard links and mounts are the kernel's business
// (Landlock and the supervisor's RESOLVE_BENEATH emulation). The result is
// a hint that refuses early with a precise reason, never a grant.
//
// Everything here is async-signal-safe: no heap, no exceptions, no locks,
// no I/O; the table owns its bytes in fixed arrays so the preload can build
// it from the environment before main and keep it in static storage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "policy/rule_lookup.h"

namespace cordon::policy {

inline constexpr std::size_t kAdmissionMaxPath = 4096;    // PATH_MAX, NUL included
inline constexpr std::size_t kAdmissionMaxRules = 128;
inline constexpr std::size_t kAdmissionArenaBytes = 32768;

enum class AdmitOp : std::uint8_t { kRead = 0, kMutate = 1 };

// Where the normalised path fell.
enum class PathClass : std::uint8_t {
  kWorkspace = 0,  // the workspace rule was the longest match
  kReadOnly = 1,   // a read-only rule (system set, --ro)
  kReadWrite = 2,  // a read-write rule other than the workspace (--rw, TMPDIR)
  kDenied = 3,     // a denied rule (a hole in an allowed parent)
  kOutside = 4,    // no rule contains it
  kMalformed = 5,  // refused before classification (rules 1 and 2)
  kHeldFd = 6,     // "/dev/stderr", "/dev/fd/N": a descriptor the tool holds (preload/fd_alias.h)
};

enum class AdmitVerdict : std::uint8_t { kAdmit = 0, kRefuse = 1 };

struct Admission {
  AdmitVerdict verdict = AdmitVerdict::kRefuse;
  PathClass cls = PathClass::kMalformed;
  int err = 0;                 // 0 when admitted, else the errno to return
  const char* reason = "";     // static string, for the one-line refusal
};

// The rules in a compact, fixed-size, copyable form. Build it once (before
// threads exist, or under the caller's own lock), then only read it.
class AdmissionTable {
 public:
  // Sets the workspace root and its kind (kReadWrite under workspace-write,
  // kReadOnly under read-only). False when the path is not absolute and
  // normal or the table is full.
  bool SetWorkspace(std::string_view root, Access kind);
  // Adds an absolute, normal path with its kind. False when malformed or full.
  bool Add(std::string_view path, Access kind);
  bool has_workspace() const { return workspace_ >= 0; }
  bool workspace_writable() const {
    return workspace_ >= 0 && rules_[workspace_].kind == Access::kReadWrite;
  }
  std::size_t size() const { return count_; }

  // Classifies `normal` (absolute and normal) by its covering rule.
  PathClass Classify(std::string_view normal) const;

 private:
  struct Rule {
    std::uint32_t offset;
    std::uint32_t len;
    Access kind;
  };
  int Insert(std::string_view path, Access kind);

  Rule rules_[kAdmissionMaxRules] = {};
  std::size_t count_ = 0;
  int workspace_ = -1;  // index into rules_
  char arena_[kAdmissionArenaBytes] = {};
  std::size_t used_ = 0;
};

// Admits or refuses `op` on `path` as the tool gave it. `base` is the
// absolute directory a relative path is resolved against (the cwd, or the
// dirfd's path); it is ignored for absolute paths and may be null then. A
// relative path with a null or relative base is refused with EINVAL.
Admission AdmitPath(const AdmissionTable& table, AdmitOp op, std::string_view path,
                    const char* base);

// The verdict for a path of class `c` (what AdmitPath concludes once it has
// classified the path); also how the supervisor names the rule of a
// refusal the preload reported by its class.
Admission AdmitClass(PathClass c, AdmitOp op, bool workspace_rw);

// Lexically normalises `path` (joined to `base` when relative) into `out`
// (kAdmissionMaxPath bytes): drops "." and empty segments and any trailing
// slash; a relative path's leading ".." segments drop the base's last
// segments (never above "/"). Returns the length, or -errno (-EACCES for a
// ".." segment after a name, -ENAMETOOLONG, -EINVAL for an embedded NUL or
// a missing base, -ENOENT for an empty path). Exposed for the supervisor
// and the fuzzer.
long NormalizePath(std::string_view path, const char* base, char* out);

// Whether `path` has a ".." segment anywhere. The paths a user hands a
// tool template (cordon grep's search paths: seed 002's tool arguments) are
// held to the letter of the rule: no ".." at all, leading or not.
bool HasParentSegment(std::string_view path);

// Lexically normal absolute path: no "." or ".." or empty segment, no
// trailing slash (except "/"), no NUL, shorter than PATH_MAX. The one test
// of a normal path: rules, the workspace and the preload's table use it.
bool IsAbsoluteNormal(std::string_view p);

const char* PathClassName(PathClass c);

}  // namespace cordon::policy
