// Where a Unix socket's name is made so that the kernel records the name
// the tool wrote (issue: getsockname showed /proc/self/fd/N/NAME).
//
// bind(2) of a path stores the string it was given as the socket's address:
// getsockname on the socket, getpeername on every connection to it, and
// recvfrom's sender all show it, and Python's multiprocessing hands that
// address to the processes that connect. The supervisor must make the name
// in the parent directory it holds beneath a writable root (no symlink on
// the way followed), yet pass bind the tool's own string. It does so in a
// scratch root of its own (supervisor/socket_bind.h): a private tmpfs
// holding the string's directories, the held parent mounted at the last
// one, so the string resolves through names only the supervisor made.
// Pure: this is the lexical part, the layout of that scratch root.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cordon::policy {

struct SocketNameLayout {
  // Relative to the scratch root: the directories to make, the last of
  // which the held parent is mounted on ("a/b" for "/a/b/s.sock", "cwd/x"
  // for "x/s.sock", "cwd" for "s.sock").
  std::string mount_at;
  // Absolute within the scratch root: the working directory for bind ("/"
  // for an absolute name, "/cwd" for a relative one).
  std::string cwd;
};

// The layout for the name `written` (the tool's sun_path, up to its NUL)
// whose last component the supervisor located as `name`; nullopt when it
// cannot be mirrored: a ".." segment (it would climb the scratch tree), a
// last component that is not `name` (a trailing "/", "."), a name directly
// in "/", or an empty one. Empty and "." segments are dropped, as the
// kernel's lookup passes over them.
std::optional<SocketNameLayout> MirrorSocketName(std::string_view written, std::string_view name);

}  // namespace cordon::policy
