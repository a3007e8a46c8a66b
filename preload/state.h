// The preload's process-wide state: the real libc entry points, the
// admission table built from the environment, and the report channel.
// Built once by the library constructor (single-threaded, before main);
// afterwards only read, except for the atomic counters. Everything called
// from a hook is async-signal-safe and fork/vfork-safe: no heap, no locks,
// no stdio, errno saved and restored.
#pragma once

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "policy/path_admission.h"
#include "preload/wire.h"

namespace cordon::preload {

struct RealCalls {
  int (*open)(const char*, int, ...);
  int (*open64)(const char*, int, ...);
  int (*openat)(int, const char*, int, ...);
  int (*openat64)(int, const char*, int, ...);
  int (*open_2)(const char*, int);
  int (*open64_2)(const char*, int);
  int (*openat_2)(int, const char*, int);
  int (*openat64_2)(int, const char*, int);
  int (*creat)(const char*, mode_t);
  int (*creat64)(const char*, mode_t);
  FILE* (*fopen)(const char*, const char*);
  FILE* (*fopen64)(const char*, const char*);
  FILE* (*freopen)(const char*, const char*, FILE*);
  int (*unlink)(const char*);
  int (*unlinkat)(int, const char*, int);
  int (*remove)(const char*);
  int (*rename)(const char*, const char*);
  int (*renameat)(int, const char*, int, const char*);
  int (*renameat2)(int, const char*, int, const char*, unsigned);
};

// Null until the constructor ran (then a hook falls back to syscall()).
extern RealCalls g_real;

// Resolves g_real with dlsym(RTLD_NEXT) and reads the configuration. Called
// by the constructor; safe to call again (idempotent).
void Initialize();

// Looks up one real stdio entry point lazily (fopen before the constructor
// ran has no syscall to fall back to). Not async-signal-safe: pre-main only.
void* ResolveLate(const char* name);

// The admission check in front of every hook. True: dispatch the real call
// (errno untouched). False: refuse, errno set to the reason's errno. Passes
// through when unconfigured or re-entered from the library itself. `path2`
// is the rename target (null otherwise); both paths must be admitted.
bool Admit(wire::Call call, policy::AdmitOp op, int dirfd, const char* path, int dirfd2 = -1,
           const char* path2 = nullptr);

// Whether open(2) flags mutate: a write access mode, O_CREAT, O_TRUNC or
// O_TMPFILE. O_PATH opens are reads.
policy::AdmitOp OpenOp(int flags);
// Whether a stdio mode string mutates ('w', 'a' or '+').
policy::AdmitOp FopenOp(const char* mode);

}  // namespace cordon::preload
