// The policy model: plain data, validated once, then const. Every source of
// policy (command line, JSON file, seed-004 settings) ends up in a Policy;
// the supervisor compiles it into the kernel fence and its decisions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "policy/fs_facts.h"
#include "policy/hard_links.h"
#include "policy/path_admission.h"
#include "policy/rule_lookup.h"
#include "policy/run_retention.h"
#include "policy/tool_pin.h"
#include "policy/web_url.h"

namespace cordon::policy {

enum class Profile { kReadOnly, kWorkspaceWrite };
// kNone: no network but the tool's own loopback (policy/loopback.h).
// kPublicWeb, kHosts: as none, plus cordon's web proxy (supervisor/net/),
// which reaches public addresses only (any name under public-web, the
// names of WebGrant::hosts under hosts:). kAllow: the host's network.
enum class Network { kNone, kAllow, kPublicWeb, kHosts };

// Whether the kernel fence of network none stands (every mode but allow).
inline bool NetworkFenced(Network n) { return n != Network::kAllow; }
// Whether the run gets the web proxy.
inline bool NetworkProxied(Network n) { return n == Network::kPublicWeb || n == Network::kHosts; }

// What deleting a file that existed before the run does (seed 002's
// sensitive operation): ask the approval service, refuse, or allow.
// What happens to a file of the user's (one that existed before the run)
// that the tool removes or replaces in the workspace. kRecoverable: it is
// kept in the run's journal first and `cordon undo` brings it back; where
// no journal can be kept, kAsk.
enum class SensitiveDelete { kAsk, kDeny, kAllow, kRecoverable };
// kStrict: the supervisor refuses writes and deletes through symlinks and
// on hard-linked or special files (policy/decide.h); kKernel: only what
// Landlock refuses.
enum class LinkMode { kStrict, kKernel };

const char* ProfileName(Profile p);
const char* NetworkName(Network n);
const char* AccessName(Access a);
const char* SensitiveDeleteName(SensitiveDelete d);
const char* LinkModeName(LinkMode m);

// The source of the read-only rule each protected path gets in a
// workspace-write run (EffectiveRules), and CoverPath's reason when it
// refuses a change there: no command-line grant loosens it.
inline constexpr const char* kProtectedPathSource = "protected path";
// The source of the workspace's own rule (EffectiveRules), and CoverPath's
// reason when the read-only profile's workspace refuses a change: the
// profile, not a path grant, is what would allow it.
inline constexpr const char* kWorkspaceSource = "workspace";
inline constexpr const char* kReadOnlyWorkspace = "read-only workspace";
// The reason a grant of one file (`--rw FILE`) refuses a change of its
// name (supervisor/write_roots.h): its directory is what would allow it.
inline constexpr const char* kSingleFileGrantRule =
    "a single-file grant: the file's name cannot change";
// The source of the denied rule each entry of the built-in credential list
// gets (supervisor/load/credentials.h): never offered for a bypass.
inline constexpr const char* kCredentialSource = "credential: denied";
// The source of the denied rule each existing match of a deny glob gets.
inline constexpr const char* kDenyGlobSource = "deny glob";
// The source of the denied rule each refused hard-linked or special file
// gets (policy/hard_links.h).
inline constexpr const char* kRefusedEntrySource = "hard-linked or special file";
// The source of a refused hard link whose every name the scan found in the
// workspace (a build's hard-linked outputs): "hardLinks": "inside-workspace"
// (--hard-links inside-workspace) would keep it, and its hint says so.
inline constexpr const char* kInsideLinkSource = "hard link, every name in the workspace";

struct PathRule {
  std::string path;  // absolute; realpath once normalised
  Access access = Access::kReadOnly;
  bool executable = true;  // Landlock EXECUTE granted (read-only set only)
  std::string source;      // where the rule came from, for explain ("--rw", a JSON pointer)
  // A read-write grant of one file (existing or not) whose name may also
  // be made, removed, and replaced by a rename from another such grant of
  // the same directory, as a file only (git's packed-refs and its lock
  // files). Without it a single-file grant may be written, not renamed.
  bool replaceable = false;
  // A read-write directory whose entries are all the tool's own, whenever
  // they were made: the private cache (policy/private_cache.h). Deleting or
  // replacing what an earlier run left there needs no approval; the
  // directory itself stays (policy/decide.h).
  bool disposable = false;
  // A denial whose names no grant may list either (the run journals): the
  // directories on the way down to it get no listing right, since Landlock
  // passes a directory's right down its whole tree. They stay traversable
  // and their other entries keep their grants; only listing them is lost.
  bool unlisted = false;

  static PathRule ReadOnly(std::string p) { return {std::move(p), Access::kReadOnly, true}; }
  static PathRule ReadOnlyNoExec(std::string p) { return {std::move(p), Access::kReadOnly, false}; }
  static PathRule ReadWrite(std::string p) { return {std::move(p), Access::kReadWrite, true}; }
  static PathRule Denied(std::string p) { return {std::move(p), Access::kDenied, false}; }
  static PathRule DeniedUnlisted(std::string p, std::string source) {
    PathRule r{std::move(p), Access::kDenied, false, std::move(source)};
    r.unlisted = true;
    return r;
  }
};

struct DroppedPath {
  std::string path;
  std::string reason;
};

struct Limits {
  std::size_t max_tree_entries = 10000;
  std::size_t max_tree_depth = 64;
  std::size_t max_delete_bytes = 20u << 20;
  // Entries the launch scans of the workspace (protected paths, deny
  // globs, hard-linked and special files) look at before they stop:
  // limits.scanEntries.
  std::size_t max_scan_entries = 2000000;
  // A recoverable run's journal (supervisor/journal/journal.h): what one
  // run keeps in all (limits.journalBytes), and the largest file written in
  // place that it copies first (limits.journalCopyBytes).
  std::size_t max_journal_bytes = std::size_t{4} << 30;
  std::size_t max_journal_copy_bytes = std::size_t{64} << 20;
  // Runs older than this many days have their journals removed when a run
  // of the same workspace starts, each named in one line (limits.journalDays).
  std::size_t max_journal_days = 30;
};

// The web grants' proxy (Network::kPublicWeb, kHosts): which names, which
// CONNECT ports, and its caps (sandbox.network in the policy file).
struct WebGrant {
  std::vector<HostPattern> hosts;  // kHosts: exact names and *.suffix patterns
  std::vector<uint16_t> ports = {443, 80};  // CONNECT targets (plain http: any port)
  std::size_t max_response_bytes = std::size_t{1} << 30;  // per response or tunnel
  std::size_t timeout_seconds = 300;  // one request or tunnel, from accept to close
  std::size_t max_connections = 64;   // open at once through the proxy
  bool operator==(const WebGrant&) const = default;
};

// .git/config, .git/hooks, .git/info, .git/commondir, a .git file,
// .gitmodules, .envrc, .cordon: files a tool could write to get code run
// later outside the sandbox (policy/protected_paths.h).
std::vector<std::string> DefaultProtectedPatterns();

struct Policy {
  Profile profile = Profile::kReadOnly;
  std::string profile_reason = "no profile named: legacy read-only policy";
  std::string workspace;           // absolute realpath of the workspace
  std::vector<PathRule> paths;     // user rules, on top of the system set
  // Seed 004's generated base policy: paths of this machine the run gets
  // by default (git's identity and config in the user's home read-only,
  // its credentials denied; a CI runner's step files and temporary
  // directory read-write). Not the policy's own: kept out of its digest,
  // which a managed workspace records. A user rule of the same path
  // replaces a base rule whatever either grants (BaseRulesInForce).
  std::vector<PathRule> base_paths;
  // Environment variables kept although they match a secret's pattern
  // (--env-keep; policy/env_scrub.h).
  std::vector<std::string> env_keep;
  // The workspace's private cache (policy/private_cache.h), canonical;
  // empty: none (read-only, --no-private-cache). Its rule is in base_paths.
  std::string private_cache;
  std::vector<DroppedPath> dropped;  // missing paths, dropped and reported
  Network network = Network::kNone;
  WebGrant web;
  bool private_tmp = true;
  Limits limits;
  // How many of the workspace's runs a run's end keeps (runs.keepDays,
  // runs.keepRuns; policy/run_retention.h).
  RunRetention runs;
  // Seed-004 settings (docs/policy.md documents each).
  bool sandbox_enabled = true;      // false only with allow_bypass (checked at load)
  bool allow_bypass = false;        // --no-sandbox is refused without it
  bool clear_policy_on_exit = true;
  bool add_cwd = true;              // addCurrentWorkingDirectory
  // Workspace-relative patterns that stay read-only under workspace-write
  // (see IsProtected), and the existing paths they matched when the policy
  // was loaded (absolute), which the kernel layer carves out.
  std::vector<std::string> protected_patterns = DefaultProtectedPatterns();
  std::vector<std::string> protected_paths;
  // The walk that found them stopped at its bound, so deeper matches are
  // not carved out: a run must then have the supervisor decide write opens,
  // deletes and renames (it matches by name, at any depth) whatever links
  // and sensitive.delete relax (supervisor::NotifyWhatPolicyNeeds).
  bool protected_scan_truncated = false;
  // Deny globs (policy/deny_glob.h: --deny-glob, a glob in deniedPaths),
  // relative to the workspace; the existing matches the launch scan found
  // (absolute, no symlink on the way), denied rules in EffectiveRules; and
  // what kept the scan from listing them all (a run is then refused whole:
  // a glob is never applied to part of the tree).
  std::vector<std::string> deny_globs;
  std::vector<std::string> deny_glob_matches;
  // Hard-linked files and special files (policy/hard_links.h): which
  // links the read grant keeps (hardLinks), and the entries of the
  // workspace the launch scan found that it leaves out (denied rules in
  // EffectiveRules). The workspace's contents, not the policy: not in its
  // digest.
  HardLinks hard_links = HardLinks::kRefuse;
  std::vector<RefusedEntry> refused_entries;
  // What kept the launch scan from seeing the whole workspace: the run is
  // then refused whole (no glob or link refusal applied to part of the tree).
  std::vector<std::string> scan_problems;
  SensitiveDelete sensitive_delete = SensitiveDelete::kRecoverable;
  LinkMode links = LinkMode::kStrict;
  std::vector<std::string> notes;   // load-time remarks explain shows
  // The exec allowlist. Empty: exec from the read-only set as before. Not
  // empty: EXECUTE only on these binaries and their loader and libraries.
  std::vector<ToolPin> tools;
};

// The devices every run may open: read and written, or read only. The
// system set grants them; the supervisor opens them as they are.
inline constexpr const char* kWritableDevices[] = {"/dev/null", "/dev/zero", "/dev/full"};
inline constexpr const char* kReadOnlyDevices[] = {"/dev/random", "/dev/urandom"};
bool IsWritableDevice(std::string_view path);
bool IsReadableDevice(std::string_view path);

// The read-only system set every run gets, before user rules: the binaries
// and libraries a tool needs, /etc minus secrets, a few devices, /proc.
std::vector<PathRule> SystemPaths();

// The base rules in force: p.base_paths minus those whose path a rule of
// p.paths (the user's: policy file, command line) names exactly. An
// explicit user rule outranks a built-in default of the same path, so
// `--ro ~/.ssh` grants what the credential list denies, and `--deny
// ~/.gitconfig` denies what the user profile grants; a broader user rule
// (`--ro ~`) is less specific and loosens nothing (rule_lookup.h). Among
// the user's own rules the stricter still wins a tie.
std::vector<PathRule> BaseRulesInForce(const Policy& p);

// Everything the tool may reach, in order: the system set, the workspace
// (read-only or read-write by profile), the private TMPDIR (when not
// empty), the base rules in force, then the policy's own rules (with /dev
// carved out of a grant of its parent), the protected paths and the deny
// globs' matches and the refused hard-linked and special files.
// With tools pinned, no rule carries EXECUTE except one read-only rule per
// file of ExecFiles(tools) (tool_pin.h), appended last.
std::vector<PathRule> EffectiveRules(const Policy& p, const std::string& private_tmp);

// The rule of `rules` that covers `path` (absolute, normal) by the one rule
// lookup (rule_lookup.h), or null when none does.
const PathRule* CoveringRule(const std::vector<PathRule>& rules, std::string_view path);

// The path step of every decision the supervisor makes: `abs` lexically
// normalised (a raw ".." segment refused as written), then its covering rule,
// which must grant: read-write, or with `reads` anything but a denial.
struct Covered {
  int err = 0;             // 0 when a granting rule covers the path
  const char* why = "";    // static: the refusal's reason
  std::string path;        // the normalised path (empty when malformed)
  const PathRule* rule = nullptr;  // the covering rule (may refuse)
};
Covered CoverPath(const std::vector<PathRule>& rules, std::string_view abs, bool reads = false);

// Whether the tool may read `path` (absolute, canonical) under `rules`: the
// covering rule is not a denial.
bool ReadableUnder(const std::vector<PathRule>& rules, const std::string& path);


// True when `path` equals `dir` or lies beneath it (both absolute, normal).
bool IsWithin(const std::string& path, const std::string& dir);

// Every problem with the policy, one line each; empty when valid. Grants
// of the kernel's interfaces are problems (kernel_interfaces.h), judged
// from `facts` about the rules' paths (supervisor::GatherFsFacts).
std::vector<std::string> Validate(const Policy& p, const FsFacts& facts);

}  // namespace cordon::policy
