// An attribute's value read off a file before a metadata change alters it,
// and set back by `cordon undo` (policy/attr_keep.h says which attributes
// a change alters and how they are recorded). Both act on a descriptor
// held for the file (O_PATH is enough: through /proc/self/fd), never on a
// name looked up again. Thread-safe: no state.
#pragma once

#include <string>

#include "base/result.h"
#include "policy/attr_keep.h"

namespace cordon::supervisor {

// The value `kind` of the file `fd` has now (`xattr_name`: which xattr; an
// absent one, or a filesystem with no xattrs, reads as absent).
Result<policy::OldAttr> ReadOldAttr(int fd, policy::AttrKind kind, const std::string& xattr_name);

// Sets `a` back on the file `fd` (an absent xattr: removed, and already
// gone is done).
Status SetOldAttr(int fd, const policy::OldAttr& a);

}  // namespace cordon::supervisor
