// A metadata call's arguments and its performance: chmod, chown, times,
// user xattrs and POSIX ACLs, truncate, FS_IOC_SETFLAGS/FSSETXATTR. The
// arguments kept in memory (a mode, an owner, two timestamps, an xattr's
// name and value) are read once from the tool (ReadAttrArgs), so what a
// bypass shows the approver (AttrArgsText) is what is performed; an
// allowed call and a bypassed one are both performed by ApplyAttr.
// Thread-safe: no state.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include <functional>
#include <optional>
#include <string>

#include "base/result.h"
#include "policy/bypass.h"
#include "supervisor/emulator.h"

namespace cordon::supervisor {

struct AttrArgs {
  policy::AttrOp op = policy::AttrOp::kOther;  // truncate, ioctl: nothing read here
  mode_t mode = 0;                             // kMode: the mode bits asked (& 07777)
  uid_t uid = static_cast<uid_t>(-1);          // kOwner: -1 leaves it
  gid_t gid = static_cast<gid_t>(-1);
  // kTimes: false for a NULL times argument (both now, utimensat(2)).
  bool times_given = false;
  timespec times[2] = {};  // atime, mtime; tv_nsec may be UTIME_NOW or UTIME_OMIT
  // kXattr: set (with value and flags) or remove.
  bool xattr_set = false;
  std::string xattr_name, xattr_value;
  int xattr_flags = 0;
};

// The metadata op of syscall `nr` (kOther for truncate and ioctl).
policy::AttrOp AttrOpOf(int nr);

// Reads the arguments of `r` (its syscall r.nr) from its registers and the
// tool's memory, and checks `valid` after reading. A refusal as the kernel
// would answer (EFAULT, ERANGE, E2BIG), an xattr outside user. and the
// POSIX ACLs (EPERM), or a stale request (EACCES), with its reason in
// `detail`.
Result<AttrArgs> ReadAttrArgs(const Request& r, const std::function<bool()>& valid);

// The arguments as an approver reads them and a bypass preview's digest
// covers (policy::DeletePreview::args): "mode 0644", "owner 1000:-1",
// "atime UTIME_NOW mtime 1700000000.000000000", "set user.k
// sha256=HEX size=N flags=0", "remove user.k".
std::string AttrArgsText(const AttrArgs& a);

// A bypass preview's op for `op`: "chmod", "chown", "utimes", "xattr"
// (empty for kOther and kNone).
std::string AttrBypassOp(policy::AttrOp op);

// Whether a mode of `args` (kMode) asks for set-id bits the emulation
// refuses (on anything but a directory's S_ISGID): they would hand the
// file owner's ids to whoever runs it, outside the sandbox too.
bool SetIdRefused(const AttrArgs& args, bool directory);

// Performs `r` with `args` on the verified file `target` (O_PATH or real;
// changes go through /proc/self/fd so O_PATH works), with the tool's
// permissions (the caller's thread holds them), so the kernel applies its
// ownership rules: only the owner changes modes, times, ACLs and flags, and
// a chown without CAP_CHOWN gives a file only to a group of the tool's.
// `by_fd`: the call named a descriptor (an ioctl needs one).
Reply ApplyAttr(const Request& r, const AttrArgs& args, int target, bool by_fd,
                const std::function<bool()>& valid);

// The change of a path-named metadata call (kind: its syscall) on
// `target`, the file checked at `abs` (lstat `st`): a symbolic link itself
// takes only an owner and times (tar and cp -a give each link they make
// its owner and times; a link has no mode and takes no user xattr, as the
// kernel answers), then ApplyAttr with `held` (a bypass's, read before it
// was asked), or with the arguments read now (null). What an allowed call
// and a bypassed one both run. `before`, when given, runs once the
// arguments are known and right before the change (a recoverable run's
// journal keeps the old values: Emulator::KeepAttrs); a reply from it is
// the answer, and nothing is changed.
using BeforeAttr = std::function<std::optional<Reply>(const AttrArgs&)>;
Reply ChangeAttr(const Request& r, int kind, int target, const struct stat& st,
                 const std::string& abs, const AttrArgs* held, const std::function<bool()>& valid,
                 const BeforeAttr& before = nullptr);

}  // namespace cordon::supervisor
