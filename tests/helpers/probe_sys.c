/* probe sys: one filesystem syscall exactly as written, for the differential
 * test (tests/integration/fidelity_test.cc), which runs the same call bare
 * and under cordon and compares the result, errno and the files left.
 *
 *   probe sys [umask=OOO] OP ARG...    exits 0 on success, else the errno
 *
 *   open PATH FLAGS [MODE]   FLAGS: '|'-joined rdonly wronly rdwr creat excl
 *                            trunc append directory nofollow path tmpfile
 *                            (a write of one byte follows a successful
 *                            write open; an O_PATH open is fstat'ed)
 *   mkdir PATH MODE | mknod PATH MODE | unlink PATH | rmdir PATH
 *   symlink TARGET PATH | link A B [follow] | truncate PATH
 *                            (link ... follow: linkat AT_SYMLINK_FOLLOW)
 *   rename A B [noreplace|exchange]        (renameat2)
 *   utimensat PATH ATIME MTIME [nofollow]  times: now, omit or seconds
 *   futimens PATH ATIME MTIME              (PATH opened O_RDONLY first)
 *   chmod PATH MODE | fchmodat PATH MODE [nofollow]  (glibc's fchmodat)
 *   chown PATH UID GID (-1 leaves one) | setxattr PATH NAME VALUE | removexattr PATH NAME
 *   fchmod PATH MODE | fchown PATH UID GID | fsetxattr PATH NAME VALUE | fremovexattr PATH NAME
 *                      (the fd forms, on PATH opened O_RDONLY first)
 *   chown-empty PATH   fchownat(fd, "", -1, -1, AT_EMPTY_PATH), fd O_PATH
 *   utimens-empty PATH utimensat(fd, NULL...) with an O_PATH fd (EBADF
 *                      bare: only futimens on a real fd changes times)
 *   pty new            posix_openpt, grantpt, unlockpt, open(ptsname): a byte
 *                      written on the subsidiary side is read on the master
 *   pty openpty        the same through openpty(3) (TIOCGPTPEER, or the path)
 *   pty closed         a pair made and its master closed: open(ptsname) then
 *   pty open PATH      open(PATH, O_RDWR|O_NOCTTY)
 * Modes are octal.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static int flag_bits(const char* s) {
  static const struct { const char* name; int bit; } kFlags[] = {
      {"rdonly", O_RDONLY},     {"wronly", O_WRONLY},       {"rdwr", O_RDWR},
      {"creat", O_CREAT},       {"excl", O_EXCL},           {"trunc", O_TRUNC},
      {"append", O_APPEND},     {"directory", O_DIRECTORY}, {"nofollow", O_NOFOLLOW},
      {"path", O_PATH},         {"tmpfile", O_TMPFILE},
  };
  int flags = 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", s);
  for (char* tok = strtok(buf, "|"); tok; tok = strtok(NULL, "|")) {
    size_t i;
    for (i = 0; i < sizeof kFlags / sizeof kFlags[0]; ++i) {
      if (!strcmp(tok, kFlags[i].name)) break;
    }
    if (i == sizeof kFlags / sizeof kFlags[0]) exit(100);
    flags |= kFlags[i].bit;
  }
  return flags;
}

static mode_t octal(const char* s) { return (mode_t)strtoul(s, NULL, 8); }

static struct timespec when(const char* s) {
  struct timespec t = {0, 0};
  if (!strcmp(s, "now")) t.tv_nsec = UTIME_NOW;
  else if (!strcmp(s, "omit")) t.tv_nsec = UTIME_OMIT;
  else t.tv_sec = strtol(s, NULL, 10);
  return t;
}

#define RET(x) return (x) < 0 ? errno : 0

/* A byte through the pair: written on the subsidiary, read on the master. */
static int pty_echo(int m, int s) {
  char c = 0;
  if (write(s, "x", 1) != 1) return errno;
  if (read(m, &c, 1) != 1) return errno;
  return c == 'x' ? 0 : EIO;
}

static int pty_op(const char* what, const char* path) {
  if (!strcmp(what, "open")) {
    int fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
    RET(fd);
  }
  if (!strcmp(what, "openpty")) {
    int m, s;
    if (openpty(&m, &s, NULL, NULL, NULL) != 0) return errno;
    return pty_echo(m, s);
  }
  int m = posix_openpt(O_RDWR | O_NOCTTY);
  if (m < 0) return errno;
  if (grantpt(m) != 0 || unlockpt(m) != 0) return errno;
  char name[64];
  if (ptsname_r(m, name, sizeof name) != 0) return errno;
  if (!strcmp(what, "closed")) {
    close(m);
    RET(open(name, O_RDWR | O_NOCTTY | O_CLOEXEC));
  }
  if (!strcmp(what, "ctty")) {
    /* No controlling terminal yet (a session of its own): ENXIO. Then one
       of its own pairs taken as the controlling terminal: /dev/tty is it. */
    close(m);
    int none = open("/dev/tty", O_RDWR | O_CLOEXEC);
    if (none >= 0) return 97;
    if (errno != ENXIO) return errno;
    m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0) return errno;
    if (ptsname_r(m, name, sizeof name) != 0) return errno;
    int s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (s < 0) return errno;
    if (ioctl(s, TIOCSCTTY, 0) != 0) return errno;
    int tty = open("/dev/tty", O_RDWR | O_CLOEXEC);
    if (tty < 0) return errno;
    return pty_echo(m, tty);
  }
  if (strcmp(what, "new") != 0) return 100;
  int s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (s < 0) return errno;
  return pty_echo(m, s);
}

int probe_sys(int argc, char** argv) {
  if (argc > 0 && !strncmp(argv[0], "umask=", 6)) {
    umask(octal(argv[0] + 6));
    ++argv;
    --argc;
  }
  if (argc < 2) return 100;
  const char* op = argv[0];
  const char* a = argv[1];
  if (!strcmp(op, "pty")) return pty_op(a, argc > 2 ? argv[2] : "");
  const char* b = argc > 2 ? argv[2] : "";
  const char* c = argc > 3 ? argv[3] : "";
  const char* d = argc > 4 ? argv[4] : "";
  if (!strcmp(op, "open")) {
    int flags = flag_bits(b);
    int fd = open(a, flags | O_CLOEXEC, argc > 3 ? octal(c) : 0);
    if (fd < 0) return errno;
    if (flags & O_PATH) {
      struct stat st;
      RET(fstat(fd, &st));
    }
    if ((flags & O_ACCMODE) != O_RDONLY && !(flags & O_DIRECTORY)) {
      if (write(fd, "x", 1) != 1) return errno;
    }
    RET(close(fd));
  }
  if (!strcmp(op, "mkdir")) RET(mkdir(a, octal(b)));
  if (!strcmp(op, "mknod")) RET(mknod(a, S_IFREG | octal(b), 0));
  if (!strcmp(op, "unlink")) RET(unlink(a));
  if (!strcmp(op, "rmdir")) RET(rmdir(a));
  if (!strcmp(op, "symlink")) RET(symlink(a, b));
  if (!strcmp(op, "link")) {
    RET(linkat(AT_FDCWD, a, AT_FDCWD, b, !strcmp(c, "follow") ? AT_SYMLINK_FOLLOW : 0));
  }
  if (!strcmp(op, "truncate")) RET(truncate(a, 1));
  if (!strcmp(op, "rename")) {
    unsigned flags = !strcmp(c, "noreplace") ? RENAME_NOREPLACE
                     : !strcmp(c, "exchange")  ? RENAME_EXCHANGE
                                               : 0;
    RET(syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, flags));
  }
  if (!strcmp(op, "utimensat") || !strcmp(op, "futimens")) {
    struct timespec ts[2] = {when(b), when(c)};
    if (!strcmp(op, "utimensat")) {
      RET(utimensat(AT_FDCWD, a, ts, !strcmp(d, "nofollow") ? AT_SYMLINK_NOFOLLOW : 0));
    }
    int fd = open(a, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    RET(futimens(fd, ts));
  }
  if (!strcmp(op, "chmod")) RET(chmod(a, octal(b)));
  if (!strcmp(op, "fchmodat")) {
    RET(fchmodat(AT_FDCWD, a, octal(b), !strcmp(c, "nofollow") ? AT_SYMLINK_NOFOLLOW : 0));
  }
  if (!strcmp(op, "chown")) RET(chown(a, (uid_t)strtol(b, NULL, 10), (gid_t)strtol(c, NULL, 10)));
  if (!strcmp(op, "setxattr")) RET(setxattr(a, b, c, strlen(c), 0));
  if (!strcmp(op, "removexattr")) RET(removexattr(a, b));
  if (!strcmp(op, "fchmod") || !strcmp(op, "fchown") || !strcmp(op, "fsetxattr") ||
      !strcmp(op, "fremovexattr")) {
    int fd = open(a, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    if (!strcmp(op, "fchmod")) RET(fchmod(fd, octal(b)));
    if (!strcmp(op, "fchown")) RET(fchown(fd, (uid_t)strtol(b, NULL, 10), (gid_t)strtol(c, NULL, 10)));
    if (!strcmp(op, "fsetxattr")) RET(fsetxattr(fd, b, c, strlen(c), 0));
    RET(fremovexattr(fd, b));
  }
  if (!strcmp(op, "chown-empty") || !strcmp(op, "utimens-empty")) {
    int fd = open(a, O_PATH | O_CLOEXEC);
    if (fd < 0) return errno;
    if (!strcmp(op, "chown-empty")) RET(fchownat(fd, "", (uid_t)-1, (gid_t)-1, AT_EMPTY_PATH));
    RET(syscall(SYS_utimensat, fd, NULL, NULL, 0));
  }
  return 100;
}
