// What a recoverable run keeps before a metadata change (issue 27): the old
// value of each attribute the change alters (a mode, an owner, the two
// timestamps, one extended attribute's value or its absence), recorded in
// the run's journal once per file and attribute, the first old value being
// the one `cordon undo` puts back. Pure: which attributes a change alters
// and how their old values read; the supervisor reads and restores them
// (supervisor/journal/attr_state.h), policy::Decide says when to keep them
// (Keep::kAttr, policy/decide.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::policy {

enum class AttrOp : std::uint8_t;  // policy/bypass.h

enum class AttrKind : std::uint8_t { kMode, kOwner, kTimes, kXattr };

// The old value of one attribute, as the journal records it.
struct OldAttr {
  AttrKind kind = AttrKind::kMode;
  std::uint32_t mode = 0;  // kMode: the permission bits (& 07777)
  std::uint32_t uid = 0;   // kOwner
  std::uint32_t gid = 0;
  // kTimes: seconds and nanoseconds (0..999999999) of each.
  std::int64_t atime_sec = 0, atime_nsec = 0, mtime_sec = 0, mtime_nsec = 0;
  std::string name;      // kXattr: which attribute (KeptXattrName)
  bool present = false;  // kXattr: it existed; `value` is its value
  std::string value;
  bool operator==(const OldAttr&) const = default;
};

// The largest old xattr value kept: the kernel's XATTR_SIZE_MAX, the most
// a value can hold. A journal may be bounded lower (limits.journalCopyBytes).
inline constexpr std::size_t kMaxKeptXattr = 64 * 1024;

// The attributes a metadata change `op` alters, in the order the journal
// records them (undo puts them back in reverse): a chmod the mode; a chown
// the owner, and the mode when the file has set-id bits (`setid`: a chown
// clears them, chown(2)); utimes the times; an xattr that attribute, and
// for the POSIX access ACL the mode too (it holds the permission bits).
// None for truncate and inode flags (kOther).
std::vector<AttrKind> AttrsAltered(AttrOp op, std::string_view xattr_name, bool setid);

const char* AttrKindName(AttrKind k);
std::optional<AttrKind> AttrKindNamed(std::string_view name);

// The audit log's `change` record of a metadata change `op` ("mode
// changed", what `cordon runs show` prints), or nullptr for one that names
// no one attribute: a truncate is a change of content, inode flags are
// never kept. AttrChangeNamed: whether `kind` is one of them.
const char* AttrChangeKind(AttrOp op);
bool AttrChangeNamed(std::string_view kind);

// Whether an xattr of this name may be kept and set back by undo: the
// user namespace and the POSIX ACLs, what the emulation lets a tool set
// (supervisor/attr_apply.h); anything else in a journal is damage.
bool KeptXattrName(std::string_view name);

// Whether `a` is a value undo may put back: a known kind, a mode of
// permission bits only, nanoseconds in range, a kept xattr name and a value
// within kMaxKeptXattr (a record edited by hand fails).
bool ValidOldAttr(const OldAttr& a);

// How undo reports putting `a` back: "mode 0644", "owner 1000:1000",
// "times atime 1700000000.000000000 mtime 1700000000.000000000",
// "xattr user.k (2 bytes)", "xattr user.k removed (absent before the run)".
std::string OldAttrText(const OldAttr& a);

}  // namespace cordon::policy
