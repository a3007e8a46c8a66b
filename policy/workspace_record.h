// The ownership record of a managed workspace (seed 002: "a private
// assistant-workspaces/<owner digest>/files directory, with its ownership
// record outside the model-accessible files directory"). Pure data and its
// canonical JSON form; the store (supervisor/workspace_store.h) does the I/O.
//
// The integrity field is SHA-256 over the canonical JSON of every other
// field, so an edited or corrupted record is refused. It is not a signature:
// a hostile process of the same uid outside the sandbox could recompute it,
// and that process is outside cordon's threat model (DESIGN.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace cordon::policy {

inline constexpr int kWorkspaceRecordVersion = 1;

struct WorkspaceRecord {
  std::string session;        // the caller's session id (ValidSessionId)
  uint32_t owner_uid = 0;     // effective uid that created the workspace
  int64_t created = 0;        // seconds since the epoch
  std::string policy_digest;  // PolicyDigest() of the policy it was created for
};

// Session ids name directories indirectly (through OwnerDigest) and appear
// in logs and JSON, so they are kept to 1..128 bytes of [A-Za-z0-9._:@-].
bool ValidSessionId(std::string_view id);

// The directory name of a session's workspace: SHA-256 hex of the owner uid
// and the session id, with a domain prefix and a separator that cannot occur
// in either, so two (uid, session) pairs never share a directory.
std::string OwnerDigest(uint32_t owner_uid, std::string_view session);

// Canonical JSON (sorted keys, no whitespace) with the integrity field.
std::string SerializeRecord(const WorkspaceRecord& r);

// Parses a record and checks its shape, version and integrity. Errors are
// EBADMSG with the reason in the detail.
Result<WorkspaceRecord> ParseRecord(std::string_view text);

}  // namespace cordon::policy
