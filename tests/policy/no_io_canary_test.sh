#!/bin/sh
# The purity check must be able to fail: run no_io_test.sh on a library that
# does every kind of I/O (io_canary.cc) and require it to refuse the library
# and to name each call.
# Usage: no_io_canary_test.sh NO_IO_TEST NM CANARY_LIB
set -u
out=$(sh "$1" "$2" "$3")
rc=$?
echo "$out"
[ "$rc" -eq 1 ] || { echo "FAIL: the check passed a library that does I/O (exit $rc)"; exit 1; }
missing=""
for sym in stat lstat fstatat statx statfs open openat read write pread fstat socket connect bind \
           accept4 poll epoll_create1 inotify_init1 eventfd fsync getdents64 syscall pthread_create \
           dlopen fork execv; do
  # glibc may name a call differently (stat64, __open_2, ...): any spelling will do.
  echo "$out" | grep -Eq "calls (__)?${sym}(64)?(_2|_chk)?\$" || missing="$missing $sym"
done
echo "$out" | grep -q 'calls .*basic_ifstream' || missing="$missing std::ifstream"
[ -z "$missing" ] || { echo "FAIL: not caught:$missing"; exit 1; }
echo "the check catches every planted call"
