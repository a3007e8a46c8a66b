/* probe: a hostile-or-honest test tool. Runs under cordon, performs one
 * operation with raw-ish libc calls and exits with 0 on success or the errno
 * it got, so tests can assert on exact refusals. Built twice: dynamic and
 * static (a static binary skips the preload; the kernel must still hold).
 *
 *   probe read PATH | write PATH | create PATH | append PATH | trunc PATH | overwrite PATH
 *   probe unlink PATH | rmdir PATH | mkdir PATH | rename A B | link A B
 *   probe symlink TARGET PATH | chmod PATH | chown PATH | utimens PATH
 *   probe mknod PATH (a FIFO) | mknod-chr PATH (a character device: /dev/null's 1,3)
 *   probe setxattr PATH | fchmod-ro PATH | exec PATH [ARG...] | memfd-exec PATH
 *   probe shm-cycle PREFIX
 *   probe connect PORT | io_uring | ptrace-parent | mount | unshare-user
 *   probe connect-unix PATH | bind-unix PATH | connect-abstract NAME
 *   probe unix-echo PATH (binds PATH, connects to it, passes a byte)
 *   probe unix-dgram | unix-dgram-pair (an AF_UNIX datagram socket) |
 *     unix-dgram-high (raw socket(2), bit 32 set in the family's register)
 *   probe connect-stuck PATH: a child connects to PATH (a listener whose
 *     backlog is full: the connect blocks) while the probe makes a
 *     directory "made-while-stuck"; ends with SIGALRM after 10 s if stuck
 *   probe bind-tcp PORT (127.0.0.1) | netlink-bind (NETLINK_ROUTE, no group)
 *   probe kill PID SIG | renice PID | prlimit-nofile PID | setaffinity PID
 *   probe renice-user UID (PRIO_USER) | pidfd-kill PID SIG
 *   probe shmat-write ID (attaches System V segment ID, writes "tool")
 *   probe shared-anon (a MAP_SHARED anonymous page, written by a child)
 *   probe own-child: forks a child, renices, limits and pins it, then
 *     kills it with pidfd_send_signal, kill and tgkill (all must work)
 *   probe tiocsti | exit N | kill-self SIG | sleep SECONDS | openat2 PATH
 *   probe opath-write PATH (open O_PATH|O_WRONLY: an O_PATH fd all the same)
 *   probe lchmod PATH (fchmodat AT_SYMLINK_NOFOLLOW, mode 0700: glibc goes
 *     through /proc/self/fd) | setacl PATH (an ACL equal to mode 0750, set
 *     with fsetxattr on PATH opened read-only)
 *   probe open-nohang PATH r|w (plain open; SIGALRM after 10 s if it blocks)
 *   probe append-flags PATH (O_WRONLY|O_APPEND open: 0 if O_APPEND is set and
 *     O_NONBLOCK is not, 98 if O_NONBLOCK is set, 97 if O_APPEND is lost)
 *   probe opath PATH (open O_PATH, then fstat) | emfile-write PATH [create|trunc]
 *     (open PATH write-only, O_CREAT|O_EXCL with create, O_TRUNC with trunc, with
 *     every fd taken); both
 *     end with SIGALRM after 10 s if stuck
 *   probe raw-openat-write PATH | x32 | fchmodat2 PATH | cwd
 *   probe in DIR OP ARG...: chdir(DIR), then OP as above
 *   probe openat-from DIR PATH: DIR opened read-only (a file will do), then
 *     openat(that fd, PATH, O_WRONLY|O_CREAT) and a write
 *   probe reopen HELD ALIAS_PREFIX MODE: opens HELD read-only (or "-" for
 *     stdout), then ALIAS_PREFIX<fd> (e.g. /dev/fd/) with MODE r, w or rw
 *     (a write adds O_CREAT|O_TRUNC, as a shell's '>') and reads or writes it
 * One raw syscall each (the exact syscall, whatever libc would pick):
 *   probe rmdir-new PATH (mkdir then rmdir: a directory born in the run)
 *   probe utime PATH | utimes PATH | futimesat PATH   (times set to 1e9)
 *   probe lchown PATH | fchown PATH | removexattr PATH | lremovexattr PATH
 *   probe fremovexattr PATH | fsetxattr PATH | mknod-reg PATH | mknodat-reg PATH
 *   probe symlinkat TARGET PATH | linkat A B | setflags PATH | fssetxattr PATH
 *   probe setxattrat PATH | removexattrat PATH | file_setattr PATH
 *   probe setversion PATH (FS_IOC_SETVERSION through a read-only fd)
 *   probe subvol-create DIR NAME (btrfs, DIR opened read-only)
 *   probe snap-create SUBVOL DIR NAME (btrfs snapshot of SUBVOL into DIR)
 *   probe reflink SRC DST (FICLONE: DST created, SRC opened read-only)
 *   probe lease PATH (F_SETLEASE read lease) | lease-high PATH (raw fcntl(2), bit
 *     32 set in the cmd's register) | lock PATH (F_SETLK read lock),
 *     both on PATH opened read-only
 *   probe inotify PATH [nofollow] (adds a watch, IN_DONT_FOLLOW with nofollow)
 *   probe inotify-event DIR (watches DIR, creates DIR/watched, reads the event;
 *     SIGALRM after 10 s if none comes)
 *   probe sys ...: one filesystem syscall as written (probe_sys.c)
 *   probe udp ...: the tool's own UDP (probe_udp.c)
 * The f* forms open PATH read-only first. setflags/fssetxattr add the
 * "nodump" flag; they exit 101 when the filesystem has no such ioctl.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/fs.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static int result(long rc) { return rc < 0 ? errno : 0; }

static int open_ro(const char* path) { return open(path, O_RDONLY | O_CLOEXEC); }

/* 1e9 seconds for both times: a value no test run produces by accident. */
static const struct timeval kTimes[2] = {{1000000000, 0}, {1000000000, 0}};

int probe_sys(int argc, char** argv);
int probe_udp(int argc, char** argv);

int main(int argc, char** argv) {
  if (argc > 3 && !strcmp(argv[1], "in")) {  // "in DIR OP...": OP run from DIR
    if (chdir(argv[2]) != 0) return errno;
    argv += 2;
    argc -= 2;
  }
  if (argc > 2 &&
      !strcmp(argv[1], "undumpable")) {  // "undumpable OP...": no ptrace by a capless peer
    if (prctl(PR_SET_DUMPABLE, 0) != 0) return errno;
    argv += 1;
    argc -= 1;
  }
  if (argc > 2 && !strcmp(argv[1], "try-undumpable")) {  // as ssh does: goes on if refused
    (void)prctl(PR_SET_DUMPABLE, 0);
    argv += 1;
    argc -= 1;
  }
  if (argc < 2) return 100;
  if (!strcmp(argv[1], "sys")) return probe_sys(argc - 2, argv + 2);  /* probe_sys.c */
  if (!strcmp(argv[1], "udp")) return probe_udp(argc - 2, argv + 2);  /* probe_udp.c */
  const char* op = argv[1];
  const char* a = argc > 2 ? argv[2] : "";
  const char* b = argc > 3 ? argv[3] : "";
  if (!strcmp(op, "read")) {
    int fd = open(a, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    char buf[64];
    ssize_t n = read(fd, buf, sizeof buf);
    return n < 0 ? errno : 0;
  }
  if (!strcmp(op, "broker-read")) {
    /* A brokered read made by hand: openat with cordon's broker bit
       (preload/wire.h kBrokerOpenFlag), as a static tool may; the bytes
       read go to stdout. */
    int fd = (int)syscall(SYS_openat, AT_FDCWD, a, O_RDONLY | O_CLOEXEC | 0x40000000, 0);
    if (fd < 0) return errno;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) return errno;
    return write(1, buf, (size_t)n) == n ? 0 : errno;
  }
  if (!strcmp(op, "write") || !strcmp(op, "create") || !strcmp(op, "append") ||
      !strcmp(op, "trunc") || !strcmp(op, "overwrite")) {
    int flags = O_WRONLY | O_CLOEXEC;
    if (!strcmp(op, "create")) flags |= O_CREAT | O_EXCL;
    if (!strcmp(op, "write")) flags |= O_CREAT;
    if (!strcmp(op, "append")) flags |= O_APPEND;
    if (!strcmp(op, "trunc")) flags |= O_TRUNC;
    if (!strcmp(op, "overwrite")) flags |= O_CREAT | O_TRUNC;
    int fd = open(a, flags, 0644);
    if (fd < 0) return errno;
    if (write(fd, "probe\n", 6) != 6) return errno;
    return close(fd) < 0 ? errno : 0;
  }
  if (!strcmp(op, "list")) { /* the names in directory A (getdents64) */
    int fd = open(a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno;
    char buf[4096];
    return result(syscall(SYS_getdents64, fd, buf, sizeof buf));
  }
  if (!strcmp(op, "opath-reopen")) { /* A held as O_PATH, reopened through /proc/self/fd: B r|w */
    int held = open(a, O_PATH | O_CLOEXEC);
    if (held < 0) return errno;
    char alias[64];
    snprintf(alias, sizeof alias, "/proc/self/fd/%d", held);
    int fd = open(alias, (!strcmp(b, "r") ? O_RDONLY : O_WRONLY | O_APPEND) | O_CLOEXEC);
    if (fd < 0) return errno;
    if (!strcmp(b, "r")) {
      char buf[64];
      return read(fd, buf, sizeof buf) < 0 ? errno : 0;
    }
    return write(fd, "poison\n", 7) == 7 ? 0 : errno;
  }
  if (!strcmp(op, "rm-then-write")) { /* A held open for writing, removed, written through the fd */
    int fd = open(a, O_RDWR | O_CLOEXEC);
    if (fd < 0) return errno;
    if (unlink(a) != 0) return errno;
    return write(fd, "poison\n", 7) == 7 ? 0 : errno;
  }
  if (!strcmp(op, "openat-from")) {
    int dirfd = open(a, O_RDONLY | O_CLOEXEC);
    if (dirfd < 0) return errno;
    int fd = openat(dirfd, b, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    if (write(fd, "probe\n", 6) != 6) return errno;
    return close(fd) < 0 ? errno : 0;
  }
  if (!strcmp(op, "reopen") && argc == 5) {
    int held = 1;
    if (strcmp(a, "-") != 0 && (held = open(a, O_RDONLY | O_CLOEXEC)) < 0) return errno;
    char alias[256];
    snprintf(alias, sizeof alias, "%s%d", b, held);
    const char* mode = argv[4];
    int flags = !strcmp(mode, "r") ? O_RDONLY : !strcmp(mode, "w") ? O_WRONLY : O_RDWR;
    if (flags != O_RDONLY) flags |= O_CREAT | O_TRUNC;
    int fd = open(alias, flags | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    if (flags == O_RDONLY) {
      char buf[64];
      return read(fd, buf, sizeof buf) < 0 ? errno : 0;
    }
    return write(fd, "reopened\n", 9) == 9 ? 0 : errno;
  }
  if (!strcmp(op, "raw-openat-write")) {
    long fd = syscall(SYS_openat, AT_FDCWD, a, O_WRONLY | O_CREAT, 0644);
    if (fd < 0) return errno;
    return write((int)fd, "raw\n", 4) == 4 ? 0 : errno;
  }
  if (!strcmp(op, "openat2")) {
    struct open_how how = {.flags = O_RDONLY};
    return result(syscall(SYS_openat2, AT_FDCWD, a, &how, sizeof how));
  }
  if (!strcmp(op, "opath")) {
    alarm(10);
    int fd = open(a, O_PATH | O_CLOEXEC);
    if (fd < 0) return errno;
    struct stat st;
    return result(fstat(fd, &st));
  }
  if (!strcmp(op, "opath-write")) { /* O_PATH ignores the access mode */
    int fd = open(a, O_PATH | O_WRONLY | O_CLOEXEC);
    return fd < 0 ? errno : 0;
  }
  if (!strcmp(op, "lchmod")) { /* glibc: O_PATH open, then chmod /proc/self/fd/N */
    return result(fchmodat(AT_FDCWD, a, 0700, AT_SYMLINK_NOFOLLOW));
  }
  if (!strcmp(op, "setacl")) { /* system.posix_acl_access u::rwx g::r-x o::---, by fd */
    struct {
      uint32_t version;
      struct {
        uint16_t tag, perm;
        uint32_t id;
      } e[3];
    } acl = {2, {{0x01, 7, (uint32_t)-1}, {0x04, 5, (uint32_t)-1}, {0x20, 0, (uint32_t)-1}}};
    int fd = open_ro(a);
    if (fd < 0) return errno;
    return result(fsetxattr(fd, "system.posix_acl_access", &acl, sizeof acl, 0));
  }
  if (!strcmp(op, "open-nohang")) {  // a FIFO must be refused, not waited on
    alarm(10);
    int fd = open(a, (!strcmp(b, "w") ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    return fd < 0 ? errno : 0;
  }
  if (!strcmp(op, "append-flags")) {  // status flags of a write open: O_APPEND only
    int fd = open(a, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) return errno;
    int fl = fcntl(fd, F_GETFL);
    return (fl & O_NONBLOCK) ? 98 : (fl & O_APPEND) ? 0 : 97;
  }
  if (!strcmp(op, "emfile-write")) {
    alarm(10);
    struct rlimit rl = {8, 8};
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) return 100;
    while (dup(0) >= 0) {
    }
    if (errno != EMFILE) return 100;
    int extra = !strcmp(b, "create") ? O_CREAT | O_EXCL : !strcmp(b, "trunc") ? O_TRUNC : 0;
    return result(open(a, O_WRONLY | O_CLOEXEC | extra, 0644));
  }
  if (!strcmp(op, "unlink")) return result(unlink(a));
  if (!strcmp(op, "rmdir")) return result(rmdir(a));
  if (!strcmp(op, "mkdir")) return result(mkdir(a, 0755));
  if (!strcmp(op, "rename")) return result(rename(a, b));
  if (!strcmp(op, "exchange")) return result(syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 2));
  if (!strcmp(op, "link")) return result(link(a, b));
  if (!strcmp(op, "symlink")) return result(symlink(a, b));
  if (!strcmp(op, "mknod")) return result(mknod(a, S_IFIFO | 0644, 0));
  if (!strcmp(op, "mknod-chr")) return result(mknod(a, S_IFCHR | 0666, makedev(1, 3)));
  if (!strcmp(op, "chmod")) return result(chmod(a, 0777));
  if (!strcmp(op, "chown")) return result(chown(a, getuid(), getgid()));
  if (!strcmp(op, "utimens")) return result(utimensat(AT_FDCWD, a, NULL, 0));
  if (!strcmp(op, "setxattr")) return result(setxattr(a, "user.cordon", "x", 1, 0));
  if (!strcmp(op, "truncate")) return result(truncate(a, 0));
  if (!strcmp(op, "fchmodat2")) return result(syscall(452, AT_FDCWD, a, 0777, 0));
  if (!strcmp(op, "fchmod-ro")) {
    int fd = open(a, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    return result(fchmod(fd, 0777));
  }
  if (!strcmp(op, "rmdir-new")) {
    if (mkdir(a, 0755) < 0) return errno;
    return result(syscall(SYS_rmdir, a));
  }
  if (!strcmp(op, "utime")) {
    struct utimbuf { long actime, modtime; } u = {1000000000, 1000000000};
    return result(syscall(SYS_utime, a, &u));
  }
  if (!strcmp(op, "utimes")) return result(syscall(SYS_utimes, a, kTimes));
  if (!strcmp(op, "futimesat")) return result(syscall(SYS_futimesat, AT_FDCWD, a, kTimes));
  if (!strcmp(op, "lchown")) return result(syscall(SYS_lchown, a, getuid(), getgid()));
  if (!strcmp(op, "fchownat-nofollow")) {
    return result(syscall(SYS_fchownat, AT_FDCWD, a, getuid(), getgid(), AT_SYMLINK_NOFOLLOW));
  }
  if (!strcmp(op, "lutimens")) {
    const struct timespec ts[2] = {{1000000000, 0}, {1000000000, 0}};
    return result(syscall(SYS_utimensat, AT_FDCWD, a, ts, AT_SYMLINK_NOFOLLOW));
  }
  if (!strcmp(op, "lchmod2")) return result(syscall(452, AT_FDCWD, a, 0700, AT_SYMLINK_NOFOLLOW));
  if (!strcmp(op, "lsetxattr")) return result(syscall(SYS_lsetxattr, a, "user.cordon", "x", 1, 0));
  if (!strcmp(op, "removexattr")) return result(syscall(SYS_removexattr, a, "user.cordon"));
  if (!strcmp(op, "lremovexattr")) return result(syscall(SYS_lremovexattr, a, "user.cordon"));
  if (!strcmp(op, "mknod-reg")) return result(syscall(SYS_mknod, a, S_IFREG | 0644, 0));
  if (!strcmp(op, "mknodat-reg")) {
    return result(syscall(SYS_mknodat, AT_FDCWD, a, S_IFREG | 0644, 0));
  }
  if (!strcmp(op, "symlinkat")) return result(syscall(SYS_symlinkat, a, AT_FDCWD, b));
  if (!strcmp(op, "linkat")) return result(syscall(SYS_linkat, AT_FDCWD, a, AT_FDCWD, b, 0));
  if (!strcmp(op, "setversion")) {
    int fd = open_ro(a);
    long generation = 424242;
    if (fd < 0) return errno;
    return result(ioctl(fd, FS_IOC_SETVERSION, &generation));
  }
  if (!strcmp(op, "fchown") || !strcmp(op, "fsetxattr") || !strcmp(op, "fremovexattr") ||
      !strcmp(op, "setflags") || !strcmp(op, "fssetxattr")) {
    int fd = open_ro(a);
    if (fd < 0) return errno;
    if (!strcmp(op, "fchown")) return result(syscall(SYS_fchown, fd, getuid(), getgid()));
    if (!strcmp(op, "fsetxattr")) {
      return result(syscall(SYS_fsetxattr, fd, "user.cordon", "x", 1, 0));
    }
    if (!strcmp(op, "fremovexattr")) return result(syscall(SYS_fremovexattr, fd, "user.cordon"));
    if (!strcmp(op, "setflags")) {
      int flags = 0;
      if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0) return 101;
      flags |= FS_NODUMP_FL;
      return result(ioctl(fd, FS_IOC_SETFLAGS, &flags));
    }
    struct fsxattr fsx;
    memset(&fsx, 0, sizeof fsx);
    if (ioctl(fd, FS_IOC_FSGETXATTR, &fsx) < 0) return 101;
    fsx.fsx_xflags |= FS_XFLAG_NODUMP;
    return result(ioctl(fd, FS_IOC_FSSETXATTR, &fsx));
  }
  /* Newer than Debian's headers: by number, with the kernel's structs. */
  if (!strcmp(op, "setxattrat")) {
    struct { unsigned long long value; unsigned size, flags; } args = {(unsigned long)"x", 1, 0};
    return result(syscall(463, AT_FDCWD, a, 0, "user.cordon", &args, sizeof args));
  }
  if (!strcmp(op, "removexattrat")) return result(syscall(466, AT_FDCWD, a, 0, "user.cordon"));
  if (!strcmp(op, "file_setattr")) {
    struct { unsigned long long xflags; unsigned extsize, nextents, projid, cowextsize; } fa = {
        FS_XFLAG_NODUMP, 0, 0, 0, 0};
    return result(syscall(469, AT_FDCWD, a, &fa, sizeof fa, 0));
  }
  if (!strcmp(op,
              "shm-cycle")) { /* sem_open's way with files named A.*: make, link, rename, drop */
    char tmp[512], name[512], moved[512], left[512];
    snprintf(tmp, sizeof tmp, "%s.tmp", a);
    snprintf(name, sizeof name, "%s.sem", a);
    snprintf(moved, sizeof moved, "%s.moved", a);
    snprintf(left, sizeof left, "%s.left", a);
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, "semaphore", 9) != 9 || ftruncate(fd, 4096) != 0) return errno;
    close(fd);
    if (link(tmp, name) != 0 || unlink(tmp) != 0) return errno;
    if (rename(name, moved) != 0 || chmod(moved, 0640) != 0) return errno;
    if ((fd = open(moved, O_RDWR | O_CLOEXEC)) < 0) return errno;
    close(fd);
    if (unlink(moved) != 0) return errno;
    fd = open(left, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600); /* left for cordon to remove */
    return fd < 0 ? errno : 0;
  }
  if (!strcmp(op, "memfd-exec")) { /* a copy of A in a memfd, exec'd by fd */
    int src = open(a, O_RDONLY | O_CLOEXEC), m = memfd_create("copy", MFD_CLOEXEC);
    if (src < 0 || m < 0) return errno;
    char buf[65536];
    ssize_t n;
    while ((n = read(src, buf, sizeof buf)) > 0) {
      if (write(m, buf, (size_t)n) != n) return errno;
    }
    char* const args[] = {"copy", NULL};
    syscall(SYS_execveat, m, "", args, environ, AT_EMPTY_PATH);
    return errno;
  }
  if (!strcmp(op, "exec")) {
    execv(a, argv + 2);
    return errno;
  }
  if (!strcmp(op, "connect") || !strcmp(op, "bind-tcp")) {
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return errno;
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(a))};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (!strcmp(op, "bind-tcp")) return result(bind(s, (struct sockaddr*)&sin, sizeof sin));
    return result(connect(s, (struct sockaddr*)&sin, sizeof sin));
  }
  if (!strcmp(op, "connect-unix") || !strcmp(op, "bind-unix") || !strcmp(op, "connect-abstract")) {
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return errno;
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    int abstract = !strcmp(op, "connect-abstract");
    if (strlen(a) + abstract >= sizeof sun.sun_path) return 100;
    memcpy(sun.sun_path + abstract, a, strlen(a));
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + abstract + strlen(a) +
                                (abstract ? 0 : 1));
    if (!strcmp(op, "bind-unix")) return result(bind(s, (struct sockaddr*)&sun, len));
    return result(connect(s, (struct sockaddr*)&sun, len));
  }
  if (!strcmp(op, "unix-echo")) {
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l < 0 || c < 0) return errno;
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    if (strlen(a) >= sizeof sun.sun_path) return 100;
    strcpy(sun.sun_path, a);
    if (bind(l, (struct sockaddr*)&sun, sizeof sun) != 0 || listen(l, 1) != 0 ||
        connect(c, (struct sockaddr*)&sun, sizeof sun) != 0) {
      return errno;
    }
    int srv = accept(l, NULL, NULL);
    char byte = 'x', got = 0;
    if (srv < 0 || write(c, &byte, 1) != 1 || read(srv, &got, 1) != 1) return errno;
    return got == 'x' ? 0 : 99;
  }
  if (!strcmp(op, "subvol-create") || !strcmp(op, "snap-create")) {
    int snap = !strcmp(op, "snap-create");
    int dir = open(snap ? b : a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return errno;
    struct btrfs_ioctl_vol_args args = {0};
    const char* name = snap ? (argc > 4 ? argv[4] : "") : b;
    if (strlen(name) >= sizeof args.name) return 100;
    strcpy(args.name, name);
    if (!snap) return result(ioctl(dir, BTRFS_IOC_SUBVOL_CREATE, &args));
    if ((args.fd = open(a, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) return errno;
    return result(ioctl(dir, BTRFS_IOC_SNAP_CREATE, &args));
  }
  if (!strcmp(op, "reflink")) {
    int src = open_ro(a);
    if (src < 0) return errno;
    int dst = open(b, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (dst < 0) return errno;
    return result(ioctl(dst, FICLONE, src));
  }
  if (!strcmp(op, "lease") || !strcmp(op, "lease-high") || !strcmp(op, "lock")) {
    int fd = open_ro(a);
    if (fd < 0) return errno;
    if (!strcmp(op, "lease")) return result(fcntl(fd, F_SETLEASE, F_RDLCK));
    if (!strcmp(op, "lease-high")) {  // the cmd's register with bit 32 set
      return result((int)syscall(SYS_fcntl, fd, (1UL << 32) | F_SETLEASE, F_RDLCK));
    }
    struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
    return result(fcntl(fd, F_SETLK, &fl));
  }
  if (!strcmp(op, "inotify")) {
    int in = inotify_init1(IN_CLOEXEC);
    if (in < 0) return errno;
    return result(
        inotify_add_watch(in, a, IN_ALL_EVENTS | (!strcmp(b, "nofollow") ? IN_DONT_FOLLOW : 0)));
  }
  if (!strcmp(op, "inotify-event")) {
    alarm(10);
    int in = inotify_init1(IN_CLOEXEC);
    if (in < 0 || inotify_add_watch(in, a, IN_CREATE) < 0) return errno;
    char path[4096];
    snprintf(path, sizeof path, "%s/watched", a);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    char buf[sizeof(struct inotify_event) + 256];
    ssize_t n = read(in, buf, sizeof buf);
    if (n < (ssize_t)sizeof(struct inotify_event)) return errno ? errno : 99;
    struct inotify_event* ev = (struct inotify_event*)buf;
    return (ev->mask & IN_CREATE) && ev->len && !strcmp(ev->name, "watched") ? 0 : 99;
  }
  if (!strcmp(op, "connect-stuck")) {
    alarm(10);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    if (strlen(a) >= sizeof sun.sun_path) return 100;
    strcpy(sun.sun_path, a);
    pid_t child = fork();
    if (child == 0) {
      int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      _exit(connect(s, (struct sockaddr*)&sun, sizeof sun) == 0 ? 0 : errno);
    }
    if (child < 0) return errno;
    usleep(300 * 1000); /* long enough for the child's connect to block */
    int rc = result(mkdir("made-while-stuck", 0755));
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    return rc;
  }
  if (!strcmp(op, "netlink-bind")) {
    int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (s < 0) return errno;
    struct sockaddr_nl snl = {.nl_family = AF_NETLINK};
    return result(bind(s, (struct sockaddr*)&snl, sizeof snl));
  }
  if (!strcmp(op, "unix-dgram")) return result(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!strcmp(op, "unix-dgram-high")) {  // the family's register with bit 32 set
    return result((int)syscall(SYS_socket, (1UL << 32) | AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  }
  if (!strcmp(op, "unix-dgram-pair")) {
    int sv[2];
    return result(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
  }
  if (!strcmp(op, "kill")) return result(kill(atoi(a), atoi(b)));
  if (!strcmp(op, "renice")) return result(setpriority(PRIO_PROCESS, (id_t)atoi(a), 10));
  if (!strcmp(op, "renice-user")) return result(setpriority(PRIO_USER, (id_t)atoi(a), 19));
  if (!strcmp(op, "prlimit-nofile")) {
    struct rlimit few = {16, 16};
    return result(prlimit(atoi(a), RLIMIT_NOFILE, &few, NULL));
  }
  if (!strcmp(op, "setaffinity")) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    return result(sched_setaffinity(atoi(a), sizeof one, &one));
  }
  if (!strcmp(op, "pidfd-kill")) {
    int pfd = (int)syscall(SYS_pidfd_open, atoi(a), 0);
    if (pfd < 0) return errno;
    return result(syscall(SYS_pidfd_send_signal, pfd, atoi(b), NULL, 0));
  }
  if (!strcmp(op, "shmat-write")) {
    char* p = shmat(atoi(a), NULL, 0);
    if (p == (void*)-1) return errno;
    memcpy(p, "tool", 5);
    return 0;
  }
  if (!strcmp(op, "shared-anon")) {
    char* p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return errno;
    pid_t kid = fork();
    if (kid < 0) return errno;
    if (kid == 0) {
      memcpy(p, "child", 6);
      _exit(0);
    }
    if (waitpid(kid, NULL, 0) != kid) return errno;
    return strcmp(p, "child") == 0 ? 0 : 99;
  }
  if (!strcmp(op, "own-child")) {
    pid_t kids[3];
    for (int i = 0; i < 3; ++i) {
      kids[i] = fork();
      if (kids[i] < 0) return errno;
      if (kids[i] == 0) {
        pause();
        _exit(0);
      }
    }
    struct rlimit none = {0, 0};
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    if (setpriority(PRIO_PROCESS, (id_t)kids[0], 5) != 0 ||
        getpriority(PRIO_PROCESS, (id_t)kids[0]) != 5 ||
        prlimit(kids[0], RLIMIT_CORE, &none, NULL) != 0 ||
        sched_setaffinity(kids[0], sizeof one, &one) != 0) {
      return errno;
    }
    int pfd = (int)syscall(SYS_pidfd_open, kids[0], 0);
    if (pfd < 0 || syscall(SYS_pidfd_send_signal, pfd, SIGTERM, NULL, 0) != 0 ||
        kill(kids[1], SIGTERM) != 0 || syscall(SYS_tgkill, kids[2], kids[2], SIGTERM) != 0) {
      return errno;
    }
    for (int i = 0; i < 3; ++i) {
      int status = 0;
      if (waitpid(kids[i], &status, 0) != kids[i]) return errno;
      if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM) return 99;
    }
    return 0;
  }
  if (!strcmp(op, "io_uring")) return result(syscall(SYS_io_uring_setup, 4, calloc(1, 128)));
  if (!strcmp(op, "ptrace-parent")) return result(ptrace(PTRACE_ATTACH, getppid(), 0, 0));
  if (!strcmp(op, "mount")) return result(mount("none", "/mnt", "tmpfs", 0, NULL));
  if (!strcmp(op, "unshare-user")) return result(unshare(CLONE_NEWUSER));
  if (!strcmp(op, "tiocsti")) {
    char c = 'x';
    return result(ioctl(0, TIOCSTI, &c));
  }
  if (!strcmp(op, "personality")) return result(syscall(SYS_personality, 0x0040000));
  if (!strcmp(op, "x32")) return result(syscall(SYS_getpid | 0x40000000));
  if (!strcmp(op, "future")) return result(syscall(500));
  if (!strcmp(op, "exit")) return atoi(a);
  if (!strcmp(op, "kill-self")) {
    kill(getpid(), atoi(a));
    return 99;
  }
  if (!strcmp(op, "sleep")) {
    sleep((unsigned)atoi(a));
    return 0;
  }
  if (!strcmp(op, "cwd")) {
    char buf[4096];
    if (!getcwd(buf, sizeof buf)) return errno;
    puts(buf);
    return 0;
  }
  return 100;
}
