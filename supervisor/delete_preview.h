// The delete preview and its recheck, made from an fd the supervisor holds
// (never from a path re-opened later), so what was approved is what is
// deleted.
//
// Open the file for the preview with openat2(RESOLVE_BENEATH) from the
// workspace fd, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC (O_NONBLOCK
// so a FIFO cannot stall the supervisor; MakePreview then refuses it).
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"
#include "policy/approval.h"

namespace cordon::supervisor {

inline constexpr uint64_t kMaxDeleteBytes = 20u << 20;  // 20 MiB

// Preview of the file open on `fd`: only a regular, single-link file of at
// most `max_bytes` whose name is printable UTF-8 qualifies (else EPERM,
// EMLINK, EFBIG or EINVAL with the reason in `detail`). A file that changes
// while it is hashed is EAGAIN.
Result<policy::DeletePreview> MakePreview(int fd, std::string rel_path,
                                          uint64_t max_bytes = kMaxDeleteBytes);

// Preview of the directory open on `fd` (rmdir of one emptied piecewise):
// path and identity (dev, ino, mtime, ctime), no content. Not a directory:
// ENOTDIR.
Result<policy::DeletePreview> MakeDirPreview(int fd, std::string rel_path);

// Preview of the regular file open on `fd` before a write in place that
// the run's journal cannot keep: path, size and identity, no content.
Result<policy::DeletePreview> MakeWritePreview(int fd, std::string rel_path);

// Preview of a bypass request (policy/bypass.h) for `op` ("open" with the
// tool's `open_flags`, "unlink", "rmdir", "mkdir", "rename", "link", or a
// metadata change "chmod", "chown", "utimes", "xattr" with its `args`,
// printable UTF-8) that `rule` refused. An unlink's is a delete's
// (MakePreview: regular, one link, hashed); an rmdir's a directory's
// (MakeDirPreview); an open's, and the file a rename moves or a link
// names, the identity of the regular single-link file on `fd`, no content;
// a metadata change's and a rename's that too, or a directory's identity;
// an open's with `fd` -1 a name that does not exist yet (identity zero),
// as a mkdir's always. A rename's or link's destination is MakeRenamePreview's.
Result<policy::DeletePreview> MakeBypassPreview(int fd, std::string rel_path, std::string op,
                                                uint64_t open_flags, std::string rule,
                                                std::string args = {});

// Preview of a bypassed rename (policy::BypassRenameEligible) of the
// regular single-link file on `from_fd` (its identity, no content: it is
// moved, not lost) to `to_rel`: over the file on `to_fd`, which it
// replaces (a delete's preview of it, MakePreview: regular, one link,
// hashed), or with `to_fd` -1 to a name that is free. A directory moved
// (identity, `directory`), with `to_fd` -1. With `op` "link": a new name
// `to_rel` (free, `to_fd` -1) for the file on `from_fd`.
Result<policy::DeletePreview> MakeRenamePreview(int from_fd, std::string from_rel, int to_fd,
                                                std::string to_rel, std::string rule,
                                                std::string op = "rename");
// Immediately before renameat2 (or linkat): the source's identity and its
// name; the file replaced (`to_fd` >= 0) as a delete's.
Status RecheckRename(int from_fd, int from_dirfd, const char* from_name, int to_fd, int to_dirfd,
                     const char* to_name, const policy::DeletePreview& p);

// Immediately before unlinkat(parent_dirfd, name, 0): the held fd still has
// the preview's identity (dev, ino, size, mtime, ctime, one link) and
// content (re-hashed), and `name` in `parent_dirfd` still names that inode
// (fstatat AT_SYMLINK_NOFOLLOW). A directory's preview: its identity (an
// entry added or removed since changes its mtime). A write's preview: the
// held fd's identity only (the fd is what the tool gets), as a bypassed
// open's and a metadata change's (made on that fd); a bypassed unlink's as
// a delete's; a rename's or link's source: identity and name. Any difference is ESTALE: a new
// preview and a new approval are needed.
Status Recheck(int fd, int parent_dirfd, const char* name, const policy::DeletePreview& preview);

}  // namespace cordon::supervisor
