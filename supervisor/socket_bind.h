// bind(2) of a Unix socket's name in a directory the supervisor holds,
// with the address the tool wrote (policy/socket_name.h says why and how
// the scratch root is laid out).
//
// Made in a child forked for the call: it enters the held directory
// (fchdir), makes a user and mount namespace of its own (CLONE_NEWUSER |
// CLONE_NEWNS, the copy keeps its working directory on the held inode),
// clones that directory's mount (open_tree), stacks a fresh tmpfs over it,
// chroots into the tmpfs, makes the written name's directories there and
// mounts the clone at the last one; then it drops every capability (the
// kernel checks the directory's permissions as it would the tool's) and
// binds the tool's string. Each name the kernel looks up on the way is the
// child's own tmpfs, so nothing the tool can change is followed: the name
// is made in the held directory and nowhere else, and the socket's
// address is what the tool wrote. Nothing of this is seen outside the
// child, which exits at once.
//
// Where no namespace can be made (a container's seccomp profile refuses
// unshare or mount, user namespaces are off), BindAsWritten says so and
// the caller binds through /proc/self/fd/N/NAME as before: the name is
// made in the same place, and the address shows that path.
//
// Called from a thread of the supervisor (fork-safe: the child makes raw
// system calls only). Its cost is a fork, paid by named binds alone.
#pragma once

#include <string>

#include "base/result.h"
#include "policy/socket_name.h"

namespace cordon::supervisor {

// Binds `sock` to `written` (the tool's sun_path string) with the name
// made in `parent` (a directory fd, O_PATH will do), laid out as `layout`.
// The value is 0 or the errno bind(2) gave (EADDRINUSE, EACCES, ...); an
// error means the scratch root could not be made (which step, and why),
// and nothing was bound.
Result<int> BindAsWritten(int sock, int parent, const std::string& written,
                          const policy::SocketNameLayout& layout);

}  // namespace cordon::supervisor
