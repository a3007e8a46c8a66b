// The preload's process-wide state: the real libc entry points and the
// admission table built from the environment (the report channel is
// reports.h).
// Built once by the library constructor (single-threaded, before main);
// afterwards only read, except for the atomic counters. Everything called
// from a hook is async-signal-safe and fork/vfork-safe: no heap, no locks,
// no stdio, errno saved and restored.
#pragma once

#include <dirent.h>
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
  FILE* (*freopen64)(const char*, const char*, FILE*);
  DIR* (*opendir)(const char*);
  int (*unlink)(const char*);
  int (*unlinkat)(int, const char*, int);
  int (*remove)(const char*);
  int (*rename)(const char*, const char*);
  int (*renameat)(int, const char*, int, const char*);
  int (*renameat2)(int, const char*, int, const char*, unsigned);
  int (*execve)(const char*, char* const[], char* const[]);
  int (*execvpe)(const char*, char* const[], char* const[]);
  int (*fexecve)(int, char* const[], char* const[]);
  int (*execveat)(int, const char*, char* const[], char* const[], int);
  void (*exit_now)(int);  // _exit
  int (*chdir)(const char*);
  int (*fchdir)(int);
};

// Null until the constructor ran (then a hook falls back to syscall()).
extern RealCalls g_real;

// The run has grants Landlock could not express (wire::kEnvBroker): a
// read-only open the kernel refused is asked of the supervisor once more
// (OpenBrokered). False: every open hook stays one tail call.
extern bool g_broker_reads;

// A read-only open that the kernel refused with EACCES, asked again as a
// brokered open (openat with wire::kBrokerOpenFlag): the supervisor opens
// it if policy lets the tool read it, and answers with its own refusal
// otherwise. `fd` is the first attempt's result; anything else than an
// EACCES refusal of a read is returned as it was.
int OpenBrokered(int fd, int dirfd, const char* path, int flags);

// An exec of `path` the kernel refused with EACCES, in a run with
// carve-outs (g_broker_reads): reported as a refusal (wire::Call::kExecve),
// so the supervisor can say why. errno is left as it was.
void ReportExecRefused(const char* path);

// A listing of `path` the kernel refused with EACCES (opendir): reported
// as a refusal (wire::Call::kOpendir) with the rule the path falls under,
// when the rules do not let it be read either; nothing when they do (a
// directory on the way to a grant). errno is left as it was.
void ReportListingRefused(const char* path);

// Resolves g_real with dlsym(RTLD_NEXT) and reads the configuration. Called
// by the constructor; safe to call again (idempotent).
void Initialize();

// The image is about to end (exit, _exit) or be replaced (exec): sends the
// reports still batched and the image's totals (reports.h).
void ImageEnding(bool exiting);

// Looks up one real stdio entry point lazily (fopen before the constructor
// ran has no syscall to fall back to). Not async-signal-safe: pre-main only.
void* ResolveLate(const char* name);

// The admission check in front of every hook. True: dispatch the real call
// (errno untouched). False: refuse, errno set to the reason's errno. Passes
// through when unconfigured or re-entered from the library itself. `path2`
// is the rename target (null otherwise); both paths must be admitted.
bool Admit(wire::Call call, policy::AdmitOp op, int dirfd, const char* path, int dirfd2 = -1,
           const char* path2 = nullptr);

// Admit() for the open family: the operation follows from `flags`, and a
// path naming a descriptor the tool holds ("/dev/stderr") is judged by that
// descriptor's access mode (fd_alias.h).
bool AdmitOpen(wire::Call call, int flags, int dirfd, const char* path);

// Whether open(2) flags mutate: a write access mode, O_CREAT, O_TRUNC or
// O_TMPFILE. O_PATH opens are reads.
policy::AdmitOp OpenOp(int flags);
// The open(2) flags a stdio mode string stands for ("r+" is O_RDWR, "a" is
// O_WRONLY|O_CREAT|O_APPEND); an unknown mode counts as O_RDWR|O_CREAT.
int FopenFlags(const char* mode);

}  // namespace cordon::preload
