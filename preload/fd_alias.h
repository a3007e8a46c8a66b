// Opens that name a descriptor the tool already holds: "/dev/stdin",
// "/dev/stdout", "/dev/stderr", "/dev/fd/N", "/proc/self/fd/N" and
// "/proc/thread-self/fd/N". Shell scripts write to /dev/stderr all the
// time; lexically these paths are outside every rule, yet reopening a pipe,
// tty, socket or /dev/null the tool holds gives it nothing new.
//
// The rule (the supervisor's emulator applies the same to notified
// write-opens, and Landlock to the file behind the link): such an open is
// admitted when the held descriptor already has the access mode asked for
// (the same mode, or O_RDWR); a descriptor held read-only cannot be
// reopened for writing, so an outside file the tool may only read stays
// read-only. An O_PATH descriptor grants no access: the ordinary path rules
// apply. A closed descriptor is left to the kernel (ENOENT).
//
// Async-signal-safe (one fcntl); errno is left alone.
#pragma once

#include "policy/path_admission.h"

namespace cordon::preload {

// The descriptor number `path` names, or -1 when it is no such alias.
int FdAliasNumber(const char* path);

enum class HeldFd { kCovered, kNotCovered, kNotHeld, kPathOnly };

// Whether descriptor `fd`, held by this process, already allows an open
// with `open_flags` (its O_ACCMODE part; O_PATH asks for no access).
HeldFd JudgeHeldFd(int fd, int open_flags);

}  // namespace cordon::preload
