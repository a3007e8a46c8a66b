// The points where a process image ends without the library destructor
// running: exec replaces it, _exit skips destructors. Each hook first sends
// the batched reports and the image's totals (reports.h), then does what
// libc does. Nothing here checks or refuses: what may be executed is
// Landlock's and the supervisor's business.
//
// execv, execvp and the execl family are built on execve and execvpe, as
// glibc builds them (its internal calls do not reach an interposer).
#include <alloca.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/state.h"

using cordon::preload::g_broker_reads;
using cordon::preload::g_real;
using cordon::preload::ReportExecRefused;
using cordon::preload::ImageEnding;
using cordon::preload::ResolveLate;

#define CORDON_EXPORT extern "C" __attribute__((visibility("default")))

extern "C" char** environ;

namespace {

int Execve(const char* path, char* const argv[], char* const envp[]) {
  ImageEnding(false);
  const int rc = g_real.execve ? g_real.execve(path, argv, envp)
                               : static_cast<int>(::syscall(SYS_execve, path, argv, envp));
  if (rc < 0 && errno == EACCES && g_broker_reads) ReportExecRefused(path);
  return rc;
}

int Execvpe(const char* file, char* const argv[], char* const envp[]) {
  ImageEnding(false);
  auto real = g_real.execvpe ? g_real.execvpe
                             : reinterpret_cast<decltype(g_real.execvpe)>(ResolveLate("execvpe"));
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  return real(file, argv, envp);
}

[[noreturn]] void Exit(int status) {
  ImageEnding(true);
  if (g_real.exit_now) g_real.exit_now(status);
  for (;;) ::syscall(SYS_exit_group, status);
}

}  // namespace

// As glibc's execl: the arguments up to the terminating null pointer become
// argv on the stack (the count includes `arg` even when it is null).
#define CORDON_VA_ARGV(arg)                                              \
  ptrdiff_t argc = 1;                                                    \
  va_list ap;                                                            \
  va_start(ap, arg);                                                     \
  while (va_arg(ap, const char*) != nullptr) ++argc;                     \
  va_end(ap);                                                            \
  if (argc >= INT_MAX) {                                                 \
    errno = E2BIG;                                                       \
    return -1;                                                           \
  }                                                                      \
  char** argv = static_cast<char**>(alloca((argc + 1) * sizeof(char*))); \
  va_start(ap, arg);                                                     \
  argv[0] = const_cast<char*>(arg);                                      \
  for (ptrdiff_t i = 1; i <= argc; ++i) argv[i] = va_arg(ap, char*);

CORDON_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  return Execve(path, argv, envp);
}

CORDON_EXPORT int execv(const char* path, char* const argv[]) {
  return Execve(path, argv, environ);
}

CORDON_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  return Execvpe(file, argv, envp);
}

CORDON_EXPORT int execvp(const char* file, char* const argv[]) {
  return Execvpe(file, argv, environ);
}

CORDON_EXPORT int execl(const char* path, const char* arg, ...) {
  CORDON_VA_ARGV(arg);
  va_end(ap);
  return Execve(path, argv, environ);
}

CORDON_EXPORT int execle(const char* path, const char* arg, ...) {
  CORDON_VA_ARGV(arg);
  char* const* envp = va_arg(ap, char* const*);
  va_end(ap);
  return Execve(path, argv, envp);
}

CORDON_EXPORT int execlp(const char* file, const char* arg, ...) {
  CORDON_VA_ARGV(arg);
  va_end(ap);
  return Execvpe(file, argv, environ);
}

CORDON_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
  ImageEnding(false);
  if (g_real.fexecve) return g_real.fexecve(fd, argv, envp);
  return static_cast<int>(::syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH));
}

CORDON_EXPORT int execveat(int dirfd, const char* path, char* const argv[], char* const envp[],
                           int flags) {
  ImageEnding(false);
  if (g_real.execveat) return g_real.execveat(dirfd, path, argv, envp, flags);
  return static_cast<int>(::syscall(SYS_execveat, dirfd, path, argv, envp, flags));
}

CORDON_EXPORT void _exit(int status) { Exit(status); }
CORDON_EXPORT void _Exit(int status) { Exit(status); }
