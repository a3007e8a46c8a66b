// The filesystems cordon knows the inner workings of: ext4 (ext2 and ext3
// mount as it), xfs, btrfs and tmpfs. Each lives in this kernel alone, so
// every change to a file goes through its VFS (and fsnotify), and each
// readdir fills the caller's buffer until the directory ends. Network and
// stacked filesystems (NFS, FUSE, overlayfs) promise neither.
#pragma once

namespace cordon::supervisor {

// Whether the file or directory open at `fd` is on one of them. False when
// fstatfs fails.
bool OnKnownLocalFilesystem(int fd);

}  // namespace cordon::supervisor
