// Approvals for the sensitive operation (deleting a file that existed
// before the run, or writing in place to one a recoverable run cannot
// keep): the preview a person or host is shown, the request and
// the outcomes. Pure; the Approver every approval source implements (and
// its waiting) is supervisor/approvals/approver.h.
//
// Only Outcome::kAllowedOnce grants, and only for the request id and the
// preview digest it was given for. Everything else (deny, timeout,
// disconnect, cancel, a stale answer, shutdown) refuses, and nothing can be
// replayed: an Approver answers each request id at most once, ever.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace cordon::policy {

// What the supervisor measured on the fd it holds (supervisor/delete_preview.h).
struct DeletePreview {
  std::string rel_path;  // relative to the workspace; printable UTF-8
  uint64_t size = 0;
  std::string sha256;  // hex
  uint64_t dev = 0, ino = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  // An empty directory (rmdir): path and identity only, no content (size 0,
  // sha256 empty). A file's preview is the seed-002 one, unchanged.
  bool directory = false;
  // A write in place to a file of the user's that the run's journal cannot
  // keep (larger than limits.journalCopyBytes, no reflink): path, size and
  // identity, no content (the file may be far larger than a delete's bound).
  bool write_in_place = false;
  // A bypass request (policy/bypass.h): the one operation the policy
  // refused, to be run outside it once: "open" (for writing, with the
  // tool's `open_flags`), "unlink", "rmdir" (of an empty directory),
  // "mkdir" or "rename" (of a file, with `to`); `bypass_rule` is the rule
  // that refused. Path and identity as
  // above (an unlink's with its SHA-256, as a delete's; an rmdir's as an
  // empty directory's); an open of a name that does not exist yet, and a
  // mkdir's new name, have ino 0.
  //
  // A metadata change: "chmod", "chown", "utimes" or "xattr" of the file
  // or directory previewed (identity, no content), with `args` the call's
  // arguments as AttrArgsText writes them ("mode 0644", "owner 1000:-1",
  // "atime UTIME_NOW mtime 1700000000.000000000", "set user.k sha256=HEX
  // size=N flags=0", "remove user.k"). "link": a new name `to` (free, ino
  // 0) for the regular single-link file previewed. A rename's `directory`:
  // a directory moved to a free name (identity, no content).
  std::string bypass;
  uint64_t open_flags = 0;
  std::string bypass_rule;
  std::string args;
  // A rename's destination: its path, and the file there that the rename
  // replaces, as a delete's preview (size, SHA-256, identity); ino 0 when
  // the name is free. The preview's own fields are the file renamed.
  struct Destination {
    std::string rel_path;
    uint64_t size = 0;
    std::string sha256;
    uint64_t dev = 0, ino = 0;
    int64_t mtime_ns = 0, ctime_ns = 0;
  };
  Destination to;
  // The one conversion between the two shapes: the file a rename replaces,
  // as its own preview shows it (MakePreview), and back, as the recheck
  // before the rename checks it.
  static Destination DestinationOf(const DeletePreview& replaced);
  DeletePreview ReplacedPreview() const;

  // SHA-256 over a canonical, versioned serialisation of every field.
  std::string Digest() const;
  nlohmann::json ToJson() const;
  // Null when a field is missing or has the wrong type.
  static std::optional<DeletePreview> FromJson(const nlohmann::json& j);
};

// A bypass preview's operation as a person reads it: "unlink", or "open"
// and the tool's flags by name ("open O_WRONLY|O_CREAT|O_TRUNC"), "chmod
// mode 0644", "link to NAME".
std::string BypassOperation(const DeletePreview& p);

// Whether `op` is a metadata bypass (chmod, chown, utimes, xattr): one with `args`.
bool IsAttrBypass(const std::string& op);

enum class Outcome {
  kAllowedOnce,   // the one grant
  kDenied,        // an answer, a rule or the deny approver said no
  kTimeout,       // nobody answered in time
  kDisconnected,  // the approver or service went away
  kCancelled,     // the supervisor withdrew the request (tool gone)
  kStale,         // wrong id or digest, a replayed id, a request that lies about its preview
  kShutdown,      // the supervisor is stopping
};

const char* OutcomeName(Outcome o);  // "allowed-once", "denied", ...

struct ApprovalRequest {
  uint64_t request_id = 0;  // unique per run (the seccomp notification id)
  DeletePreview preview;
  std::string preview_digest;  // must equal preview.Digest()
  int tool_pid = 0;
  std::string tool_argv0;
};

}  // namespace cordon::policy
