// The interposed libc entry points. Each has libc's prototype (the headers
// declare them; -fno-exceptions is the no-throw guarantee; the variadic
// open family is below), checks its path(s) with Admit() and then tail-calls
// the real function, or makes the raw syscall when the constructor has not
// resolved it yet. Only these symbols are exported (exports.map).
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/state.h"

using cordon::policy::AdmitOp;
using cordon::preload::Admit;
using cordon::preload::AdmitOpen;
using cordon::preload::FopenFlags;
using cordon::preload::g_broker_reads;
using cordon::preload::g_real;
using cordon::preload::OpenBrokered;
using cordon::preload::ReportListingRefused;
using cordon::preload::ResolveLate;
using cordon::wire::Call;

#define CORDON_EXPORT extern "C" __attribute__((visibility("default")))

// Fortified callers (-D_FORTIFY_SOURCE) reach these; glibc declares them
// only in its fortify headers.
extern "C" {
int __open_2(const char* path, int flags);
int __open64_2(const char* path, int flags);
int __openat_2(int dirfd, const char* path, int flags);
int __openat64_2(int dirfd, const char* path, int flags);
}

namespace {

// As glibc's __OPEN_NEEDS_MODE: the mode argument exists only with O_CREAT
// or O_TMPFILE; reading it otherwise would read garbage off the va_list.
bool NeedsMode(int flags) { return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE; }

int RawOpenat(int dirfd, const char* path, int flags, mode_t mode) {
  return static_cast<int>(::syscall(SYS_openat, dirfd, path, flags, mode));
}

}  // namespace

// The open family is variadic: the mode exists only with O_CREAT or
// O_TMPFILE. These four hooks are defined with the mode as a named
// parameter under the libc symbol name. On x86-64 and AArch64 Linux a
// variadic integer argument travels in the register a named one would, and
// a callee that does not use va_start may ignore %al, so callers see exactly
// libc's function; the register holds garbage when no mode was passed, and
// is read only when NeedsMode(), as glibc's va_arg is. Defined this way a
// hook ends in a jump to the real function (GCC makes no tail call from a
// function that calls va_start): returning through the hook after the
// syscall would cost an instruction-TLB and cache miss on this library's
// page on every call (~45 ns on the reference VM, bench/preload_bench.cc).
#if !defined(__x86_64__) && !defined(__aarch64__)
#error "the open hooks take their variadic mode as a named argument: check the calling convention"
#endif

extern "C" {
CORDON_EXPORT int OpenHook(const char* path, int flags, mode_t mode) __asm__("open");
CORDON_EXPORT int Open64Hook(const char* path, int flags, mode_t mode) __asm__("open64");
CORDON_EXPORT int OpenatHook(int dirfd, const char* path, int flags, mode_t mode) __asm__("openat");
CORDON_EXPORT int Openat64Hook(int dirfd, const char* path, int flags, mode_t mode)
    __asm__("openat64");
}

namespace {

// The real call, or the raw syscall before the constructor resolved it.
// Inlined: each hook still ends in one jump to libc. With g_broker_reads
// (a run with carve-outs) a read the kernel refused is asked of the broker
// after it (OpenBrokered), which costs the tail call; nothing else does.
inline int RealOpen(const char* path, int flags, mode_t mode) {
  return g_real.open ? g_real.open(path, flags, mode) : RawOpenat(AT_FDCWD, path, flags, mode);
}
inline int RealOpen64(const char* path, int flags, mode_t mode) {
  return g_real.open64 ? g_real.open64(path, flags, mode)
                       : RawOpenat(AT_FDCWD, path, flags | O_LARGEFILE, mode);
}
inline int RealOpenat(int dirfd, const char* path, int flags, mode_t mode) {
  return g_real.openat ? g_real.openat(dirfd, path, flags, mode)
                       : RawOpenat(dirfd, path, flags, mode);
}
inline int RealOpenat64(int dirfd, const char* path, int flags, mode_t mode) {
  return g_real.openat64 ? g_real.openat64(dirfd, path, flags, mode)
                         : RawOpenat(dirfd, path, flags | O_LARGEFILE, mode);
}
inline int RealOpen2(const char* path, int flags) {
  return g_real.open_2 ? g_real.open_2(path, flags) : RawOpenat(AT_FDCWD, path, flags, 0);
}
inline int RealOpen64_2(const char* path, int flags) {
  return g_real.open64_2 ? g_real.open64_2(path, flags)
                         : RawOpenat(AT_FDCWD, path, flags | O_LARGEFILE, 0);
}
inline int RealOpenat2(int dirfd, const char* path, int flags) {
  return g_real.openat_2 ? g_real.openat_2(dirfd, path, flags) : RawOpenat(dirfd, path, flags, 0);
}
inline int RealOpenat64_2(int dirfd, const char* path, int flags) {
  return g_real.openat64_2 ? g_real.openat64_2(dirfd, path, flags)
                           : RawOpenat(dirfd, path, flags | O_LARGEFILE, 0);
}

}  // namespace

int OpenHook(const char* path, int flags, mode_t mode) {
  if (!NeedsMode(flags)) mode = 0;
  if (!AdmitOpen(Call::kOpen, flags, AT_FDCWD, path)) return -1;
  if (__builtin_expect(g_broker_reads, false)) {
    return OpenBrokered(RealOpen(path, flags, mode), AT_FDCWD, path, flags);
  }
  return RealOpen(path, flags, mode);
}

int Open64Hook(const char* path, int flags, mode_t mode) {
  if (!NeedsMode(flags)) mode = 0;
  if (!AdmitOpen(Call::kOpen64, flags, AT_FDCWD, path)) return -1;
  if (__builtin_expect(g_broker_reads, false)) {
    return OpenBrokered(RealOpen64(path, flags, mode), AT_FDCWD, path, flags);
  }
  return RealOpen64(path, flags, mode);
}

int OpenatHook(int dirfd, const char* path, int flags, mode_t mode) {
  if (!NeedsMode(flags)) mode = 0;
  if (!AdmitOpen(Call::kOpenat, flags, dirfd, path)) return -1;
  if (__builtin_expect(g_broker_reads, false)) {
    return OpenBrokered(RealOpenat(dirfd, path, flags, mode), dirfd, path, flags);
  }
  return RealOpenat(dirfd, path, flags, mode);
}

int Openat64Hook(int dirfd, const char* path, int flags, mode_t mode) {
  if (!NeedsMode(flags)) mode = 0;
  if (!AdmitOpen(Call::kOpenat64, flags, dirfd, path)) return -1;
  if (__builtin_expect(g_broker_reads, false)) {
    return OpenBrokered(RealOpenat64(dirfd, path, flags, mode), dirfd, path, flags);
  }
  return RealOpenat64(dirfd, path, flags, mode);
}

// The fortified forms take no mode: glibc aborts if O_CREAT reaches them,
// so the real one is called to keep that behaviour.
CORDON_EXPORT int __open_2(const char* path, int flags) {
  if (!AdmitOpen(Call::kOpen2, flags, AT_FDCWD, path)) return -1;
  if (__builtin_expect(g_broker_reads, false)) {
    return OpenBrokered(RealOpen2(path, flags), AT_FDCWD, path, flags);
  }
  return RealOpen2(path, flags);
}

CORDON_EXPORT int __open64_2(const char* path, int flags) {
  if (!AdmitOpen(Call::kOpen64_2, flags, AT_FDCWD, path)) return -1;
  if (__builtin_expect(g_broker_reads, false)) {
    return OpenBrokered(RealOpen64_2(path, flags), AT_FDCWD, path, flags);
  }
  return RealOpen64_2(path, flags);
}

CORDON_EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  if (!AdmitOpen(Call::kOpenat2, flags, dirfd, path)) return -1;
  if (__builtin_expect(g_broker_reads, false)) {
    return OpenBrokered(RealOpenat2(dirfd, path, flags), dirfd, path, flags);
  }
  return RealOpenat2(dirfd, path, flags);
}

CORDON_EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  if (!AdmitOpen(Call::kOpenat64_2, flags, dirfd, path)) return -1;
  if (__builtin_expect(g_broker_reads, false)) {
    return OpenBrokered(RealOpenat64_2(dirfd, path, flags), dirfd, path, flags);
  }
  return RealOpenat64_2(dirfd, path, flags);
}

CORDON_EXPORT int creat(const char* path, mode_t mode) {
  if (!AdmitOpen(Call::kCreat, O_WRONLY | O_CREAT | O_TRUNC, AT_FDCWD, path)) return -1;
  return g_real.creat ? g_real.creat(path, mode)
                      : RawOpenat(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

CORDON_EXPORT int creat64(const char* path, mode_t mode) {
  if (!AdmitOpen(Call::kCreat64, O_WRONLY | O_CREAT | O_TRUNC, AT_FDCWD, path)) return -1;
  return g_real.creat64 ? g_real.creat64(path, mode)
                        : RawOpenat(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC | O_LARGEFILE,
                                    mode);
}

namespace {

// The broker's descriptor `fd` as a FILE or DIR (`wrap`: fdopen,
// fdopendir); null when there is none or the wrap fails, which closes it
// again and keeps the wrap's errno.
template <class Wrap>
auto Wrapped(int fd, Wrap wrap) -> decltype(wrap(fd)) {
  if (fd < 0) return nullptr;
  auto w = wrap(fd);
  if (w == nullptr) {
    int err = errno;
    close(fd);
    errno = err;
  }
  return w;
}

// A stream the real fopen could not open for reading (EACCES), asked of
// the broker (OpenBrokered) and wrapped with fdopen: libc's fopen opens
// through its own internal open, which no hook sees. `flags`: the mode's
// open flags (FopenFlags), with O_CLOEXEC for "e".
__attribute__((cold, noinline)) FILE* FopenBrokered(FILE* f, const char* path, const char* mode,
                                                    int flags) {
  if (f != nullptr) return f;
  if (mode != nullptr && strchr(mode, 'e') != nullptr) flags |= O_CLOEXEC;
  return Wrapped(OpenBrokered(-1, AT_FDCWD, path, flags),
                 [mode](int fd) { return fdopen(fd, mode); });
}

}  // namespace

// stdio has no syscall to fall back to; before the constructor ran the
// real function is looked up on the spot.
CORDON_EXPORT FILE* fopen(const char* path, const char* mode) {
  const int flags = FopenFlags(mode);
  if (!AdmitOpen(Call::kFopen, flags, AT_FDCWD, path)) return nullptr;
  auto real = g_real.fopen ? g_real.fopen
                           : reinterpret_cast<decltype(g_real.fopen)>(ResolveLate("fopen"));
  if (real == nullptr) {
    errno = ENOSYS;
    return nullptr;
  }
  if (__builtin_expect(g_broker_reads, false)) {
    return FopenBrokered(real(path, mode), path, mode, flags);
  }
  return real(path, mode);
}

CORDON_EXPORT FILE* fopen64(const char* path, const char* mode) {
  const int flags = FopenFlags(mode);
  if (!AdmitOpen(Call::kFopen64, flags, AT_FDCWD, path)) return nullptr;
  auto real = g_real.fopen64 ? g_real.fopen64
                             : reinterpret_cast<decltype(g_real.fopen64)>(ResolveLate("fopen64"));
  if (real == nullptr) {
    errno = ENOSYS;
    return nullptr;
  }
  if (__builtin_expect(g_broker_reads, false)) {
    return FopenBrokered(real(path, mode), path, mode, flags);
  }
  return real(path, mode);
}

namespace {

using FreopenFn = FILE* (*)(const char*, const char*, FILE*);

// A stream reopened for reading on a file the kernel refused (EACCES), in a
// run with carve-outs: asked of the broker, as fopen's is. glibc's failed
// freopen has closed the stream's file (its descriptor too) and leaves
// the FILE closed, not freed; libc reopens through its own internal open,
// which no hook sees. So the stream is reopened by libc itself on
// /dev/null with the caller's mode (glibc then sets up the FILE: buffer,
// mode bits, orientation, O_CLOEXEC for "e"), and the brokered file is put
// under that descriptor with dup3. The brokered descriptor is moved above
// the number it took first, so that the reopen takes the lowest free one,
// as glibc's own freopen would (the old one: 0 for stdin). Refused by the
// broker: the stream stays closed, as after any failed freopen.
__attribute__((cold, noinline)) FILE* FreopenBrokered(FILE* f, FreopenFn real, const char* path,
                                                      const char* mode, FILE* stream, int flags) {
  if (f != nullptr || path == nullptr || stream == nullptr || errno != EACCES ||
      cordon::preload::OpenOp(flags) != AdmitOp::kRead) {
    return f;
  }
  int fd = OpenBrokered(-1, AT_FDCWD, path, flags | O_CLOEXEC);
  if (fd < 0) return nullptr;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
  int err = errno;
  close(fd);
  if (moved < 0) {
    errno = err;
    return nullptr;
  }
  FILE* g = real("/dev/null", mode, stream);
  if (g == nullptr) {
    err = errno;
    close(moved);
    errno = err;
    return nullptr;
  }
  const bool cloexec = mode != nullptr && strchr(mode, 'e') != nullptr;
  // Both descriptors are open: only a racing dup2 onto the target fails it.
  if (dup3(moved, fileno_unlocked(g), cloexec ? O_CLOEXEC : 0) < 0) {
    err = errno;
    close(moved);
    errno = err;
    return nullptr;
  }
  close(moved);
  return g;
}

// freopen(NULL, mode, f) changes the mode of f's own file: no path to admit.
// A refused freopen closes `stream`, as a failed freopen does.
FILE* Freopen(Call call, FreopenFn real, const char* path, const char* mode, FILE* stream) {
  const int flags = FopenFlags(mode);
  if (path != nullptr && !AdmitOpen(call, flags, AT_FDCWD, path)) {
    int err = errno;
    fclose(stream);
    errno = err;
    return nullptr;
  }
  if (real == nullptr) {
    errno = ENOSYS;
    return nullptr;
  }
  if (__builtin_expect(g_broker_reads, false)) {
    return FreopenBrokered(real(path, mode, stream), real, path, mode, stream, flags);
  }
  return real(path, mode, stream);
}

}  // namespace

CORDON_EXPORT FILE* freopen(const char* path, const char* mode, FILE* stream) {
  return Freopen(
      Call::kFreopen,
      g_real.freopen ? g_real.freopen : reinterpret_cast<FreopenFn>(ResolveLate("freopen")), path,
      mode, stream);
}

// What a program built with _FILE_OFFSET_BITS=64 calls (coreutils, most
// distribution packages): glibc's stdio.h redirects freopen to it.
CORDON_EXPORT FILE* freopen64(const char* path, const char* mode, FILE* stream) {
  return Freopen(
      Call::kFreopen64,
      g_real.freopen64 ? g_real.freopen64 : reinterpret_cast<FreopenFn>(ResolveLate("freopen64")),
      path, mode, stream);
}

namespace {

// A directory the real opendir could not open (EACCES), asked of the broker
// with opendir's own flags and wrapped with fdopendir: glibc's opendir
// opens through its own internal open, which no hook sees. The broker
// decides what may be listed (a directory made beside a carve-out, on the
// way to an unlisted denial; never a denied one, nor one holding an
// unlisted denial).
__attribute__((cold, noinline)) DIR* OpendirBrokered(DIR* d, const char* path) {
  if (d != nullptr || path == nullptr || errno != EACCES) return d;
  return Wrapped(OpenBrokered(-1, AT_FDCWD, path, O_RDONLY | O_NONBLOCK | O_DIRECTORY | O_CLOEXEC),
                 [](int fd) { return fdopendir(fd); });
}

}  // namespace

// Not admitted here (a listing is a read the kernel decides; glibc's own
// callers, scandir, glob and nftw, reach its internal opendir and never
// this one): only asked of the broker after the kernel refused it, and a
// refusal that stands reported, so that `ls` and os.listdir of a directory
// out of reach get a line that says why.
CORDON_EXPORT DIR* opendir(const char* path) {
  auto real = g_real.opendir ? g_real.opendir
                             : reinterpret_cast<decltype(g_real.opendir)>(ResolveLate("opendir"));
  if (real == nullptr) {
    errno = ENOSYS;
    return nullptr;
  }
  DIR* d = __builtin_expect(g_broker_reads, false) ? OpendirBrokered(real(path), path) : real(path);
  if (__builtin_expect(d == nullptr && errno == EACCES, false)) ReportListingRefused(path);
  return d;
}

CORDON_EXPORT int unlink(const char* path) {
  if (!Admit(Call::kUnlink, AdmitOp::kMutate, AT_FDCWD, path)) return -1;
  return g_real.unlink ? g_real.unlink(path)
                       : static_cast<int>(::syscall(SYS_unlinkat, AT_FDCWD, path, 0));
}

CORDON_EXPORT int unlinkat(int dirfd, const char* path, int flags) {
  if (!Admit(Call::kUnlinkat, AdmitOp::kMutate, dirfd, path)) return -1;
  return g_real.unlinkat ? g_real.unlinkat(dirfd, path, flags)
                         : static_cast<int>(::syscall(SYS_unlinkat, dirfd, path, flags));
}

CORDON_EXPORT int remove(const char* path) {
  if (!Admit(Call::kRemove, AdmitOp::kMutate, AT_FDCWD, path)) return -1;
  if (g_real.remove) return g_real.remove(path);
  // As glibc: unlink, and rmdir when it is a directory.
  long r = ::syscall(SYS_unlinkat, AT_FDCWD, path, 0);
  if (r < 0 && errno == EISDIR) r = ::syscall(SYS_unlinkat, AT_FDCWD, path, AT_REMOVEDIR);
  return static_cast<int>(r);
}

CORDON_EXPORT int rename(const char* from, const char* to) {
  if (!Admit(Call::kRename, AdmitOp::kMutate, AT_FDCWD, from, AT_FDCWD, to)) return -1;
  return g_real.rename ? g_real.rename(from, to)
                       : static_cast<int>(::syscall(SYS_renameat, AT_FDCWD, from, AT_FDCWD, to));
}

CORDON_EXPORT int renameat(int fromfd, const char* from, int tofd, const char* to) {
  if (!Admit(Call::kRenameat, AdmitOp::kMutate, fromfd, from, tofd, to)) return -1;
  return g_real.renameat ? g_real.renameat(fromfd, from, tofd, to)
                         : static_cast<int>(::syscall(SYS_renameat, fromfd, from, tofd, to));
}

CORDON_EXPORT int renameat2(int fromfd, const char* from, int tofd, const char* to,
                            unsigned flags) {
  if (!Admit(Call::kRenameat2, AdmitOp::kMutate, fromfd, from, tofd, to)) return -1;
  return g_real.renameat2
             ? g_real.renameat2(fromfd, from, tofd, to, flags)
             : static_cast<int>(::syscall(SYS_renameat2, fromfd, from, tofd, to, flags));
}
