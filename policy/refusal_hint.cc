#include "policy/refusal_hint.h"

#include "policy/decide.h"
#include "policy/kernel_interfaces.h"
#include "policy/path_segments.h"
#include "policy/policy.h"
#include "policy/protected_paths.h"
#include "policy/rule_lookup.h"

namespace cordon::policy {

Refusal FromAdmission(PathClass cls, bool mutate) {
  switch (cls) {
    case PathClass::kOutside: return mutate ? Refusal::kWriteOutside : Refusal::kReadOutside;
    case PathClass::kReadOnly: return mutate ? Refusal::kWriteOutside : Refusal::kNone;
    case PathClass::kWorkspace: return mutate ? Refusal::kReadOnlyProfile : Refusal::kNone;
    case PathClass::kDenied: return Refusal::kDenied;
    case PathClass::kReadWrite:
    case PathClass::kMalformed:
    case PathClass::kHeldFd: return Refusal::kNone;
  }
  return Refusal::kNone;
}

Refusal FromRule(std::string_view rule) {
  // policy::CoverPath's reasons (policy.cc) and Decide's approval rule
  // (decide.cc): the ones a command-line grant can change.
  if (rule == "outside every allowed path") return Refusal::kWriteOutside;
  if (rule == "read-only path") return Refusal::kWriteOutside;
  // WriteRoots::Locate's, for a name change under a grant of one file.
  if (rule == kSingleFileGrantRule) return Refusal::kWriteOutside;
  if (rule == kReadOnlyWorkspace) return Refusal::kReadOnlyProfile;
  if (rule == "denied path") return Refusal::kDenied;
  if (rule == kRefusedEntrySource) return Refusal::kRefusedEntry;
  if (rule == kInsideLinkSource) return Refusal::kInsideLink;
  if (rule == kProtectedPathSource) return Refusal::kProtected;
  if (rule == kApprovalRule) return Refusal::kNeedsApproval;
  if (rule == kNoJournalApprovalRule) return Refusal::kNeedsApprovalUnkept;
  return Refusal::kNone;
}

bool IsRuntimeProbe(std::string_view path) {
  constexpr std::string_view kPerfData = "/tmp/hsperfdata_";
  if (path.starts_with(kPerfData) && path.size() > kPerfData.size()) return true;
  constexpr std::string_view kProc = "/proc/", kFilter = "/coredump_filter";
  if (!path.starts_with(kProc) || !path.ends_with(kFilter)) return false;
  const std::string_view who =
      path.substr(kProc.size(), path.size() - kProc.size() - kFilter.size());
  return who == "self" || who == "thread-self" ||
         (!who.empty() && who.find_first_not_of("0123456789") == std::string_view::npos);
}

std::string ShellWord(std::string_view word) {
  bool plain = !word.empty();
  for (char c : word) {
    plain = plain && (c == '/' || c == '.' || c == '_' || c == '-' || c == '+' || c == ',' ||
                      c == ':' || c == '@' || c == '%' || (c >= '0' && c <= '9') ||
                      (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
  }
  if (plain) return std::string(word);
  std::string q = "'";
  for (char c : word) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

namespace {

// Why the path is kept from the tool, and the one edit that lets it write
// there: removing the default pattern that covers it. A pattern matches at
// any depth, so the absolute path is matched as it is; a pattern of the
// user's own is theirs to remove.
std::string ProtectedHint(std::string_view path) {
  const std::string why =
      "what it holds is run later, outside the sandbox (git's config and hooks, .envrc); ";
  std::string_view rel = path;
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  for (const std::string& pattern : DefaultProtectedPatterns()) {
    if (MatchesProtected({pattern}, rel)) {
      return why + "to allow it anyway: \"protectedPaths\": [\"-" + pattern +
             "\"] in a policy file (--policy FILE)";
    }
  }
  return why + "the policy file's \"protectedPaths\" lists it (cordon policy explain)";
}

}  // namespace

std::string RefusalHint(Refusal r, std::string_view path) {
  // What no grant opens (policy/kernel_interfaces.h): a hint naming one
  // would only be refused at the next launch.
  const bool device = PathWithin(path, kDeviceDir);
  const bool control = PathWithin(path, "/proc") || PathWithin(path, "/sys");
  if (device && (r == Refusal::kReadOutside || r == Refusal::kWriteOutside)) {
    return "a device node: no grant opens one (every run has /dev/null, /dev/zero, /dev/full, "
           "/dev/random and /dev/urandom, and its own terminal)";
  }
  if (control && r == Refusal::kWriteOutside) {
    return "a kernel control filesystem (/proc, /sys): no grant makes it writable";
  }
  switch (r) {
    case Refusal::kReadOutside: return "to allow it: --ro " + ShellWord(path);
    case Refusal::kWriteOutside: {
      // A name in a shared temporary directory is often made anew each
      // time (mktemp /tmp/x.XXXXXX): its grant gets past this refusal only.
      const std::string_view dir = ParentOf(path);
      std::string note;
      if (dir == "/tmp" || dir == "/var/tmp" || dir == "/dev/shm") {
        note =
            "the run's own temporary directory is $TMPDIR; a name made anew each time "
            "(mktemp) needs --rw " +
            std::string(dir) + "; ";
      }
      return note + "to allow it: --rw " + ShellWord(path);
    }
    case Refusal::kReadOnlyProfile: return "to allow it: --profile workspace-write";
    case Refusal::kDenied:
      return "a deny rule covers it (cordon policy explain --path shows which)";
    case Refusal::kNeedsApproval:
      return "it existed before the run: approve it (--approvals tty), or keep such deletes "
             "for cordon undo; to allow it: --sensitive-delete recoverable";
    case Refusal::kNeedsApprovalUnkept:
      return "it existed before the run, and no journal keeps it here (only the workspace's "
             "files are kept): approve it (--approvals tty); to allow it: --sensitive-delete "
             "allow";
    case Refusal::kExecute:
      return "a program made during the run beside a denied path has no kernel grant to execute "
             "(Landlock checks it at exec; no broker can): run it through its interpreter (sh " +
             ShellWord(path) + ")";
    case Refusal::kRefusedEntry:
      return "a file with more than one name (or a device or FIFO) is never read: a local git "
             "clone hard-links .git/objects (clone with --no-hardlinks), pnpm and ccache stores "
             "link files (copy them in); docs/policy.md, \"Hard links and special files\"";
    case Refusal::kInsideLink:
      return "a file with more than one name is read only where every name of it lies in the "
             "workspace, as this one's do (a build's hard-linked outputs: cargo's target/, "
             "cp -al); to allow it: --hard-links inside-workspace";
    case Refusal::kProtected:
      return ProtectedHint(path);
    case Refusal::kNone: return {};
  }
  return {};
}

std::string NameChangeHint(Refusal r, std::string_view path) {
  return RefusalHint(r, r == Refusal::kWriteOutside ? ParentOf(path) : path);
}

std::string ExecuteHint(std::string_view path, const std::vector<RefusedEntry>& refused) {
  if (refused.empty()) return RefusalHint(Refusal::kExecute, path);
  const std::string more =
      refused.size() > 1 ? " and " + std::to_string(refused.size() - 1) + " more" : "";
  return "a program made during the run beside a file the kernel grant leaves out (" +
         refused.front().path + more + ": " + kRefusedEntrySource +
         ") has no kernel grant to execute: Landlock needs read to execute, and read is what "
         "the carve-out takes away. A local git clone's .git/objects are such links: `git "
         "repack -a -d` there (or clone with --no-hardlinks) and run again; a script runs "
         "through its interpreter (sh " +
         ShellWord(path) + ")";
}

}  // namespace cordon::policy
