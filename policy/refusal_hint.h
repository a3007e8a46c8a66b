// What to tell the user when the sandbox refuses something: the grant that
// would let that one operation through, spelt as they would add it to the
// command line, so that following a hint literally gets past the refusal
// (issue 24 item 6; tests/integration/refusal_hint_test.cc follows them).
//
// Pure: from the rule that refused and the path, no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "policy/hard_links.h"
#include "policy/path_admission.h"

namespace cordon::policy {

enum class Refusal {
  kReadOutside,          // a read no rule covers
  kWriteOutside,         // a change no rule covers, or under a read-only rule
  kReadOnlyProfile,      // a change inside the workspace of a read-only run
  kDenied,               // a --deny rule (or a built-in one) covers it
  kNeedsApproval,        // deleting or replacing a file that predates the run
  kNeedsApprovalUnkept,  // the same where no journal keeps it (outside the workspace)
  kExecute,              // an exec the kernel refused in a run with carve-outs
  kRefusedEntry,         // a hard-linked or special file (policy/hard_links.h)
  kInsideLink,           // a hard link whose every name is in the workspace
  kProtected,            // a protected path (policy/protected_paths.h): a policy file's edit
  kNone,                 // no grant changes it (malformed)
};

// The refusal a preload admission stands for (a read or a change).
Refusal FromAdmission(PathClass cls, bool mutate);

// The refusal one of the supervisor's rules stands for: `rule` is the
// static reason policy::CoverPath or policy::Decide gave.
Refusal FromRule(std::string_view rule);

// The hint for `path` (absolute, normal), or empty when no grant helps.
// Written "to allow it: --rw /x/y" (command-line words after "to allow it: "),
// or a sentence when the fix is not a grant.
std::string RefusalHint(Refusal r, std::string_view path);

// The hint for a refused change of the name `path` (a delete, either end of
// a rename, a link's or a symlink's new name, a mkdir): a grant of one file
// lets it be written and made by an open, never removed, renamed or made
// otherwise (Landlock's rights on a file alone), so where a grant is the
// answer it names the directory the name lies in.
std::string NameChangeHint(Refusal r, std::string_view path);

// The hint for an exec the kernel refused of `path`, made during the run
// beside a carve-out. With refused hard-linked or special files in the run
// (`refused`, sorted), it names them, the likeliest carve-out (a local git
// clone's objects), and how to be rid of them; a script may still run
// through its interpreter.
std::string ExecuteHint(std::string_view path, const std::vector<RefusedEntry>& refused);

// A path an honest runtime tries and does without, silently, when it is
// refused: the JVM's performance-data directory (/tmp/hsperfdata_USER and
// its files, which only `jps` and `jstat` read) and its write of its own
// /proc/PID/coredump_filter. Its refusal is said at the default log level
// only when the tool then fails (supervisor/refusal_log.h), as a refused
// name server's is: every java run met both.
bool IsRuntimeProbe(std::string_view path);

// Shell-quotes one word when it needs it (a path with a space or a quote).
std::string ShellWord(std::string_view word);

}  // namespace cordon::policy
