// The kernel's own interfaces, which no policy opens up. Landlock grants a
// path as asked, and a tool without capabilities still passes the
// permission bits of most of these as root (root owns /proc/sys, /sys and
// /dev/sda): a write to /proc/sys, /sys or a cgroup changes the kernel or
// the tool's own limits, and a disk's device node reads or writes every
// file on the disk, whatever the rest of the policy says.
#pragma once

#include <string>
#include <vector>

#include "policy/fs_facts.h"
#include "policy/policy.h"

namespace cordon::policy {

// Where the machine's device nodes live; a grant of an ancestor (`--ro /`)
// gets it carved out (EffectiveRules), the system set's devices excepted.
inline constexpr const char* kDeviceDir = "/dev";
// Where glibc makes POSIX semaphores and shared memory: the one place under
// /dev a policy may grant, and the shared directory a run may make its own
// files in (supervisor::SharedDirs).
inline constexpr const char* kSharedMemoryDir = "/dev/shm";
// The source EffectiveRules gives that carve-out (policy explain shows it).
inline constexpr const char* kDeviceCarveOut =
    "device nodes, carved out of a grant of their parent";

// Every rule (the workspace included) that would open a kernel interface,
// one line each; empty when there is none. Refused: a writable path on a
// kernel pseudo-filesystem (proc, sysfs, cgroup, debugfs and the like), a
// device node outside the system set, and a directory at or beneath /dev
// other than /dev/shm. Paths are canonical (NormalisePolicy ran); `facts`
// says which are on such a filesystem and which are device nodes.
std::vector<std::string> KernelInterfaceProblems(const Policy& p, const FsFacts& facts);

// Whether a statfs(2) f_type is one of the filesystems through which the
// kernel is configured (proc, sysfs, cgroup, debugfs, tracefs, securityfs,
// bpf, configfs, efivarfs, pstore, devpts, binfmt_misc).
bool IsKernelControlFs(long f_type);

}  // namespace cordon::policy
