// The supervisor's decision on a file operation the tool asked for, from the
// facts the supervisor gathered: one pure function, no syscall, so that it
// is table-tested and fuzzed (tests/policy/decide_test.cc).
//
// Before it, the one rule lookup (rule_lookup.h, through
// supervisor::WriteRoots::Locate) has found that a read-write rule covers
// the path and which held root to act beneath; the supervisor then looks at
// the entry there (statx beneath that root, no symlink followed) and asks
// Decide. After it, the supervisor performs what was allowed, as the tool's
// credentials, or asks the approver (kAsk).
//
// Facts the supervisor did not gather are kUnknown (an open's entry before
// the open; a rename's source when nothing could make it matter): a rule
// whose fact is unknown does not refuse. So the supervisor may ask twice,
// before acting with what it knows and after, and a cheap call stays cheap.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "policy/policy.h"

namespace cordon::policy {

enum class FileOp : std::uint8_t {
  kOpenWrite,  // open(2) for writing: an existing entry, or one the call creates
  kCreate,     // mkdir, symlink, mknod: a new name
  kDelete,     // unlink, rmdir (`want_dir`)
  kRename,     // rename: `entry` is the source, `other` the destination
  kExchange,   // renameat2(RENAME_EXCHANGE): both move
  kLink,       // link: `entry` is the source, `other` the new name
  kMetadata,   // chmod, chown, utimes, xattrs, truncate, inode flags
  // A brokered read (wire::kBrokerOpenFlag): a read-only open the
  // supervisor makes for the tool where Landlock's launch-time grant could
  // not reach (an entry created beside a carved-out path). The path step
  // (the read fence's CoverPath) has found a rule that grants reading;
  // `entry` is what was opened, the link followed.
  kRead,
};

// What lstat found at a name. kAbsent: nothing there; kUnknown: not looked.
enum class EntryKind : std::uint8_t {
  kUnknown,
  kAbsent,
  kRegular,
  kDirectory,
  kSymlink,
  kSpecial,  // a device (character or block): opening one acts on hardware
  // A FIFO or a socket: no content of its own. Refused where a special
  // file is (writes, reads, deletes of the user's); its metadata may change,
  // and a FIFO the run made may be opened at either end.
  kFifo,
  kSocket,
};

// A device, FIFO or socket: what EntryRefusal calls a special file.
constexpr bool IsSpecial(EntryKind k) {
  return k == EntryKind::kSpecial || k == EntryKind::kFifo || k == EntryKind::kSocket;
}

// Where a path lies. Whether it is protected is a fact the supervisor
// establishes (the patterns, and the birth of a repository's .git).
struct PlaceFacts {
  bool root = false;       // the held root itself (its relative path is empty)
  bool shared = false;     // the top level of a shared directory (/dev/shm)
  bool file_grant = false;  // a name a single-file grant covers (PathRule::replaceable)
  // Beneath a disposable rule (the private cache): every entry is the
  // tool's own, whenever it was made (PathRule::disposable).
  bool disposable = false;
  bool protected_path = false;
  // A directory beneath which a protected path could lie, by its literal
  // lead (.git) or, `any_depth`, beneath a "**" pattern's lead.
  bool leads_to_protected = false;
  bool leads_to_protected_any_depth = false;
  // The path matches a deny glob (policy/deny_glob.h): the tool may not
  // make, change or remove it. `deny_glob_parents`: a glob's match depends
  // on a directory's name, so renaming a directory may make one.
  bool deny_glob = false;
  bool deny_glob_parents = false;
  // The config of a repository this run made (.git/config,
  // config.worktree, a submodule's): git writes it by renaming its lock
  // file over it, and only content that sets no key that runs a program
  // there (policy/git_config_keys.h) may take its place. Also a
  // pre-existing repository's .git/config, where the content may differ
  // from the user's only by a submodule's registration (ContentFact).
  bool guarded_config = false;
  // That pre-existing config: also a protected path, which git's rename of
  // checked content onto it (only) passes.
  bool users_config = false;
  // The commondir of a worktree's admin directory this run made
  // (.git/worktrees/NAME, by git worktree add: policy/git_worktree.h,
  // WorktreeAdminDir). Also a protected path: it names where git reads
  // config and hooks from. Made by an open where there is none, it is
  // made by the supervisor with the one content git writes
  // (kWorktreeCommonDir: the repository's own common dir), never the
  // tool's bytes (Decision::make_link); removed, it is the run's own file.
  bool new_worktree_link = false;
  // Protected too: a link file of the user's repository that git removes
  // (git worktree remove, prune): a `.git` entry (a worktree's or a
  // submodule's gitfile) or a worktree admin dir's commondir. Removing a
  // regular file there redirects nothing: making or writing one again is
  // still refused, and an admin dir's config and hooks are protected
  // paths (policy/protected_paths.h). Removed, it is a file of the user's
  // like any other (kept in the journal, asked, or refused).
  bool removable_link = false;
  // Its name is `.git`, in the workspace: what git takes for a repository
  // (a directory) or a link to one (a gitfile, a symbolic link). Only a
  // directory or a gitfile may be made there, a gitfile by an open the
  // supervisor checks at the run's end (policy::GitFileLeadsSafely): a
  // symbolic link, a hard link or a rename of anything but another `.git`
  // onto the name would lead git to a directory no rule protects.
  bool git_entry = false;
  // The run's journal covers it (the workspace): under sensitive.delete
  // recoverable a file of the user's is kept there before it changes.
  bool journaled = false;
};

// The rule of a delete or replacement of a file that predates the run
// (refusal_hint.h names the grant from it), and the same where the run's
// journal does not reach (outside the workspace).
inline constexpr const char* kApprovalRule = "the file existed before the run and needs approval";
inline constexpr const char* kNoJournalApprovalRule =
    "the file existed before the run, where no journal keeps it, and needs approval";

// What the supervisor read in a file about to take a guarded config's
// place. kUnknown: not read (yet). kChangesUsers: a config the user had
// would change beyond what policy/git_config_keys.h lets git change there.
enum class ContentFact : std::uint8_t { kUnknown, kSafe, kRunnable, kUnreadable, kChangesUsers };

struct EntryFacts {
  EntryKind kind = EntryKind::kUnknown;
  std::uint32_t nlink = 1;
  // A denied or protected path's inode, or one on the way to it (for
  // kRead: a denied path's only, as the read fence pins them).
  bool pinned = false;
  // The run's own (made by it, not laundered over the user's). For a
  // FIFO: made by this supervisor (kOpenWrite, kRead may then open it).
  bool born_in_run = false;
  bool own = true;           // in a shared directory: made by this run
  // A directory with an entry besides "." and "..": the kernel's ENOTEMPTY
  // for rmdir and a rename over it comes before any rule. Looked at only
  // where a rule would otherwise refuse (false: empty, or not looked).
  bool has_entries = false;
  // kRead: a directory that holds a denial no grant may list
  // (PathRule::unlisted: the run records, journals and scan caches). Its
  // listing would name that denial where Landlock lists nothing.
  bool holds_unlisted = false;
};

struct FileRequest {
  FileOp op = FileOp::kOpenWrite;
  PlaceFacts place;         // of the path (the source, for rename and link)
  EntryFacts entry;         // at the path (the source)
  PlaceFacts other_place;   // rename, exchange and link: the destination
  EntryFacts other;         // at the destination
  bool same_root = true;    // rename and link: both beneath one held root
  bool want_dir = false;    // rmdir, unlink(AT_REMOVEDIR)
  bool tmpfile = false;     // open(O_TMPFILE): no name, nothing to check
  bool created = false;     // open: this call made the file
  bool nofollow = false;    // metadata: AT_SYMLINK_NOFOLLOW (the link itself)
  // kCreate: what is made. A FIFO is made where a regular file may be; a
  // device or a socket (mknod(2)) is refused.
  EntryKind create = EntryKind::kRegular;
  // kCreate: the tool could stat the name (an EEXIST answer gives nothing
  // away). kDelete of a directory: the tool could stat it and list an
  // entry in it (nor does an ENOTEMPTY answer).
  bool tool_sees_name = false;
  // open with O_TRUNC; kMetadata: truncate(2).
  bool truncate = false;
  // kRename onto a guarded config: what the source holds.
  ContentFact source_content = ContentFact::kUnknown;
};

struct Settings {
  bool delete_allowed = false;  // sensitive.delete: allow
  // sensitive.delete: recoverable, with a journal open for the run: a file
  // of the user's is kept before it is removed or replaced (Decision::keep).
  bool recoverable = false;
  bool can_ask = false;         // an approver is configured
};

enum class Verdict : std::uint8_t { kAllow, kRefuse, kAsk };

// Which kind of rule refused (policy/bypass.h: only a refusal by the
// policy's own rules may be offered to the approver as a bypass). kOther:
// everything else, none of which is ever offered (an entry that is a
// symbolic link, hard-linked or special; a root; another run's file; the
// kernel's own answers).
enum class RefusedBy : std::uint8_t {
  kOther,
  kProtectedPath,  // a protected path (policy/protected_paths.h)
  kDenyGlob,       // a deny glob's match
  kDeniedPath,     // a denial the user wrote (--deny, deniedPaths)
  kReadOnlyPath,   // a read-only rule the user wrote, or the read-only profile's workspace
  kCredential,     // the built-in credential deny list (kCredentialSource)
  kOutside,        // outside every rule, or a raw ".." segment
};

// What the run's journal keeps before an allowed change is made: nothing,
// the entry itself (moved there: a delete, the destination a rename
// replaces, a file opened O_TRUNC), or a copy of its bytes (a file written
// in place or truncated, whose inode stays), or the old value of what a
// metadata change alters (its mode, owner, times or xattr: policy/attr_keep.h).
enum class Keep : std::uint8_t { kNothing, kMove, kCopy, kAttr };

struct Decision {
  Verdict verdict = Verdict::kAllow;
  int err = 0;              // the errno for kRefuse
  const char* rule = "";    // static: which rule decided, for the log and the tests
  // kRename: the moved inode replaces a file of the user's, so deleting it
  // later is deleting the user's file (no laundering through a rename).
  bool launders = false;
  // kRename onto a guarded config: put the bytes that were checked in
  // place (a new file), not the source inode, which the tool may still
  // hold open for writing; then remove the source, as a rename would.
  bool copy_checked = false;
  // kOpenWrite of a new worktree's commondir (PlaceFacts::new_worktree_link)
  // where there is none: the supervisor makes it with the content git
  // writes, and what the tool writes goes to a file of its own that no
  // name reaches.
  bool make_link = false;
  Keep keep = Keep::kNothing;
  // kRefuse: which kind of rule refused.
  RefusedBy by = RefusedBy::kOther;

  static Decision Allow(const char* rule = "allowed") { return {Verdict::kAllow, 0, rule}; }
  static Decision Refuse(int err, const char* rule) { return {Verdict::kRefuse, err, rule}; }
  // A refusal by one of the policy's own rules (a protected path, a deny glob).
  static Decision RefuseBy(RefusedBy by, int err, const char* rule) {
    Decision d = Refuse(err, rule);
    d.by = by;
    return d;
  }
  bool allowed() const { return verdict == Verdict::kAllow; }
};

Decision Decide(const FileRequest& req, const Settings& settings);

// Both steps for a path the tool named: the path step (CoverPath: no raw
// "..", a covering read-write rule; for kRead any rule but a denial), then
// Decide. What the supervisor
// decides, composed as the fuzzer checks it (tests/fuzz/decide_fuzz.cc).
Decision DecideAt(const std::vector<PathRule>& rules, std::string_view abs,
                  const FileRequest& req, const Settings& settings);

// Why an existing entry may not be written, changed or deleted through a
// name: a symbolic link, a hard-linked regular file (nlink > 1), a special
// file; null when none of these.
const char* EntryRefusal(const EntryFacts& e);

// What the run's journal keeps before a metadata change (kMetadata, not a
// truncate) of the entry `e` at `p`, allowed or bypassed once: the old
// value of what it alters (kAttr) for an entry of the user's (existing
// before the run, not the run's own) in a recoverable run's workspace, not
// the workspace directory itself (a record names an entry in it); else
// nothing. Decide's keep for an allowed change; a bypass asks it too.
Keep MetadataKeep(const EntryFacts& e, const PlaceFacts& p, const Settings& s);

}  // namespace cordon::policy
