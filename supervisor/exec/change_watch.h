// ChangeWatch: whether a file's bytes may have changed since a moment. An
// inotify watch on the file's inode, taken before the file is hashed, so a
// pinned tool need not be hashed again at every exec while it is quiet.
//
// Every way to change a file's bytes on a local filesystem reports to it:
// write, pwrite, truncate, fallocate, splice, copy_file_range, a clone into
// it and io_uring writes raise IN_MODIFY; a writer through a shared mapping
// holds the file open for writing, so either it still does at the exec (the
// kernel refuses to run a file open for writing: ETXTBSY) or its last close
// raised IN_CLOSE_WRITE. IN_ATTRIB, IN_MOVE_SELF and IN_DELETE_SELF count
// too, and so does a lost event (queue overflow) or a watch the kernel
// dropped. A network or stacked filesystem (NFS, FUSE, overlayfs) can change
// beneath this kernel's notice: no watch is given there, and the caller
// hashes again. Writes to the block device under a mounted filesystem are
// outside what cordon defends (README, "Honest limits").
//
// All watches of a process share one inotify instance: the instances are
// few per user (fs.inotify.max_user_instances, 128 by default) and the
// host's own services need theirs.
#pragma once

#include <cstdint>
#include <memory>

namespace cordon::supervisor {

class ChangeWatch {
 public:
  // A watch on the file open at `fd`; null where none can be had (the
  // filesystem is not ext4, xfs, btrfs or tmpfs, or inotify failed).
  static std::shared_ptr<ChangeWatch> Start(int fd);

  // True while no event has come for the file since Start(). Once false,
  // false for good. Thread-safe.
  bool Quiet() const;

 private:
  ChangeWatch(int wd, uint64_t since) : wd_(wd), since_(since) {}
  int wd_;          // in the process's one inotify instance
  uint64_t since_;  // the events its descriptor had seen when it started
};

}  // namespace cordon::supervisor
