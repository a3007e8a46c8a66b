#!/bin/sh
# policy/ is pure (DESIGN.md, "The one-way street"): the policy library calls
# no I/O. Fails, naming the object and the symbol, when any object of the
# static library LIB leaves one of the I/O entry points below undefined
# (nm -u): files, sockets, polling, inotify, eventfd, directory listing,
# stat and statfs in every glibc spelling (open64, __open_2, __xstat,
# fstatat64, statx, ...), raw syscall(2), threads, dlopen, fork and exec,
# and the C++ library's file streams, std::thread and std::filesystem.
#
# Usage: no_io_test.sh NM LIB
set -eu
nm_tool=$1
lib=$2
[ -f "$lib" ] || { echo "no such library: $lib" >&2; exit 2; }

# One name a line, anchored; version suffixes (@GLIBC_2.2.5) are stripped
# before matching.
forbidden='^(__)?(open|openat)(64)?(_2)?$
^openat2$
^(__)?creat(64)?$
^(__)?(p?read|p?write)(64)?(_chk|_nocancel)?$
^(p?readv|p?writev)(64)?2?$
^(socket|socketpair|connect|bind|listen|accept|accept4|shutdown)$
^(__)?(send|sendto|sendmsg|sendmmsg|recv|recvfrom|recvmsg|recvmmsg)(_chk)?$
^(__)?p?poll(_chk)?$
^p?select$
^epoll_
^inotify_
^eventfd(_read|_write)?$
^(fsync|fdatasync|sync_file_range|syncfs|sync)$
^getdents(64)?$
^(readdir|opendir|fdopendir|scandir|scandirat)(64)?(_r)?$
^f?statv?fs(64)?$
^(__)?[fl]?stat(64)?$
^(__)?fstatat(64)?$
^newfstatat$
^statx$
^__[fl]?xstat(64)?$
^__fxstatat(64)?$
^syscall$
^pthread_create$
^(dlopen|dlmopen|dlsym|dlvsym)$
^(_?_?fork|vfork|clone|clone3|_Fork)$
^(exec[lv]p?e?|execveat|fexecve|posix_spawnp?|system|popen)$
^(__)?(realpath|canonicalize_file_name|readlink|readlinkat)(_chk)?$
^(mkdir|mkdirat|mknod|mknodat|unlink|unlinkat|rmdir|rename|renameat|renameat2|link|linkat|symlink|symlinkat)$
^(f?chmod|fchmodat|f?chown|lchown|fchownat|f?truncate)(64)?$
^(ioctl|fcntl|fcntl64|mmap|mmap64|fopen|fopen64|freopen|freopen64|fdopen|tmpfile|tmpfile64)$
basic_filebuf
basic_[io]?fstream
St10filesystem
St6thread'

# "SYMBOL OBJECT" lines; each pattern's "$" becomes the space after SYMBOL.
patterns=$(printf '%s\n' "$forbidden" | sed 's/\$$/ /')
found=$("$nm_tool" -u -A "$lib" |
  sed -E 's/^([^:]*:)?([^:]*): +U +([^@ ]*).*$/\3 \2/' |
  grep -E -e "$patterns" |
  awk '{print $2 " calls " $1}' | sort -u)
if [ -n "$found" ]; then
  echo "policy/ must not do I/O; move it beside the supervisor (docs/architecture.md):"
  echo "$found"
  exit 1
fi
echo "$(basename "$lib"): no I/O symbols among $("$nm_tool" -u "$lib" | grep -c ' U ') undefined"
