// Not part of cordon: a library that does the I/O policy/ must not, one
// call of each kind, so tests/policy/no_io_canary_test.sh can show that
// no_io_test.sh still catches every one (a check that cannot fail checks
// nothing). Compiled with the project's flags, never linked.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace cordon::canary {

long Everything(const char* path, void* (*fn)(void*)) {
  struct stat st;
  struct statfs sfs;
  struct statx stx;
  long n = ::stat(path, &st) + ::lstat(path, &st) + ::fstatat(AT_FDCWD, path, &st, 0) +
           ::statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &stx) + ::statfs(path, &sfs);
  int fd = ::open(path, O_RDONLY) + ::openat(AT_FDCWD, path, O_RDONLY);
  char buf[64];
  n += ::read(fd, buf, sizeof buf) + ::write(fd, buf, 1) + ::pread(fd, buf, 1, 0) + ::fstat(fd, &st);
  int s = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
  n += ::connect(s, nullptr, 0) + ::bind(s, nullptr, 0) + ::accept4(s, nullptr, nullptr, 0);
  pollfd p{s, POLLIN, 0};
  n += ::poll(&p, 1, 0) + ::epoll_create1(0) + ::inotify_init1(0) + ::eventfd(0, 0) + ::fsync(fd);
  n += ::getdents64(fd, buf, sizeof buf) + ::syscall(SYS_getpid);
  pthread_t t;
  n += ::pthread_create(&t, nullptr, fn, nullptr);
  n += ::dlopen(path, RTLD_NOW) != nullptr;
  char* const argv[] = {nullptr};
  if (::fork() == 0) ::execv(path, argv);
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return n + static_cast<long>(line.size());
}

}  // namespace cordon::canary
