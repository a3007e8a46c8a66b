// Opens that name a descriptor the tool already holds: "/dev/stdin",
// "/dev/stdout", "/dev/stderr", "/dev/fd/N", "/proc/self/fd/N" and
// "/proc/thread-self/fd/N". Shell scripts write to /dev/stderr all the
// time; lexically these paths are outside every rule, yet reopening a pipe,
// tty, socket or /dev/null the tool holds gives it nothing new.
//
// The one table and the one rule, for the preload (before dispatch, in the
// tool) and the supervisor (on notified write-opens); Landlock checks the
// file behind the link. Such an open is admitted when the held descriptor
// already has the access mode asked for (the same mode, or O_RDWR); a
// descriptor held read-only cannot be reopened for writing, so an outside
// file the tool may only read stays read-only. An O_PATH descriptor grants
// no access: the ordinary path rules apply. A closed descriptor is left to
// the kernel (ENOENT).
//
// Pure and async-signal-safe: the caller reads the descriptor's flags.
#pragma once

namespace cordon::policy {

// The descriptor number `path` names, or -1 when it is no such alias.
int FdAliasNumber(const char* path);

enum class HeldFd { kCovered, kNotCovered, kNotHeld, kPathOnly };

// Whether a held descriptor whose F_GETFL flags are `held_flags` (negative:
// not held) already allows an open with `open_flags` (its O_ACCMODE part;
// O_PATH asks for no access).
HeldFd JudgeHeldFd(long held_flags, int open_flags);

}  // namespace cordon::policy
