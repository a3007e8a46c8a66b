// The supervisor's decisions for the mutating syscalls a tool makes: each
// one is resolved beneath a held write root (write_roots.h), checked against
// the admission rules (no raw "..", no symlinks, no hard-linked files, no
// special files, nothing outside, nothing protected), and performed by the
// supervisor itself. Opens are answered with a new fd to install
// (SECCOMP_IOCTL_NOTIF_ADDFD); connect and bind are made on a copy of the
// tool's socket (emulator_socket.cc). Nothing is ever answered with CONTINUE
// except execve, which Landlock's EXECUTE rights enforce, and umask, which
// changes no file (it is notified so the cached umask is dropped:
// tool_creds.h).
//
// Deleting the user's file (an inode born before the run, or one that
// replaced such a file by a rename in this run) is the sensitive operation:
// it is refused unless the run's gates (run_gates.h) get an allowed-once
// for the preview made here, which is then rechecked on the held fd.
//
// A decision that may wait (a question to a person, a blocking connect) is
// never waited for in Handle: its reply carries `later`, the checked rest
// of the call holding what was resolved (the held parent or file, the
// Located path), which the notify loop runs once on a worker of its own.
//
// Thread-safe: Handle() may run on several threads at once.
#pragma once

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/fd.h"
#include "policy/approval.h"
#include "policy/bypass.h"
#include "policy/decide.h"
#include "policy/policy.h"
#include "policy/terminal.h"
#include "policy/tool_pin.h"
#include "supervisor/blocking_calls.h"
#include "supervisor/emulator_reply.h"
#include "supervisor/inode_set.h"
#include "supervisor/journal/journal.h"
#include "supervisor/net/loopback_netns.h"
#include "supervisor/read_fence.h"
#include "supervisor/rules.h"
#include "supervisor/run_gates.h"
#include "supervisor/run_observer.h"
#include "supervisor/socket_stand_in.h"
#include "supervisor/tool_creds.h"
#include "supervisor/tool_env.h"
#include "supervisor/write_roots.h"

namespace cordon::supervisor {

class ProxyPeers;
struct AttrArgs;  // attr_apply.h

// The mechanisms a run's decisions use; what is decided is the policy's
// (Rules, supervisor/rules.h), read from the run's LiveRules.
struct EmulatorOptions {
  // public-web and hosts: the web proxy's endpoint and the record of the
  // tool's connections to it (supervisor/net/proxy_peers.h).
  std::shared_ptr<ProxyPeers> web_proxy;
  // What the run may ask and is told of execs (run_gates.h): approvals
  // for sensitive deletes and unkept writes, bypass requests, the exec
  // gate, exec check-ins, and the stop that ends pending questions. Null:
  // DenyGates (nobody to ask).
  std::shared_ptr<RunGates> gates;
  // sandbox.allowBypass: a write-open, a delete, a mkdir, a rename, a link
  // or a metadata change the policy refuses inside the workspace is
  // offered as a bypass when
  // policy::BypassEligible says so and the gates can ask (not under
  // --approvals deny) (emulator_bypass.cc). Otherwise no request is made
  // and the refusal stands.
  bool allow_bypass = false;
  // The built-in credential list (policy::IsCredentialPath): never offered
  // for a bypass, whatever rule covers the path.
  std::vector<policy::PathRule> credentials;
  // sensitive.delete: recoverable: the run's journal, which keeps the
  // user's files before they are removed or replaced in the workspace and
  // records every change to a name there (null: not recoverable).
  std::shared_ptr<Journal> journal;
  // Told every enforced decision and every change made (the audit log);
  // may be null.
  std::shared_ptr<RunObserver> observer;
  // What the tool may read, for the calls Landlock does not check
  // (inotify_add_watch) and the reads its launch-time grant cannot
  // express (brokered reads): the fence is made from this at the first
  // such call (read_fence.h); null fails closed.
  std::shared_ptr<const ReadFenceSource> read_fence_of;
  // The links the private HOME was made with (tool_env.h): a path through
  // one of them names what the link leads to (ToolAbsolute).
  std::vector<HomeLink> home_links;
};

class Emulator {
 public:
  // `rules`: started (LiveRules::Start); read once per request.
  Emulator(std::shared_ptr<LiveRules> rules, int64_t run_start_ns, EmulatorOptions opts,
           std::unique_ptr<ReadFence> read_fence = nullptr);
  // Removes what the tool left in the shared directories (its semaphores and
  // shared memory in /dev/shm): the host's tmpfs is no place for a finished
  // run's files, as the private TMPDIR is removed too.
  ~Emulator();
  Emulator(const Emulator&) = delete;
  Emulator& operator=(const Emulator&) = delete;

  const EmulatorOptions& options() const { return opts_; }
  RunGates& gates() const { return *opts_.gates; }

  // `still_valid` re-checks the notification id after the tool's memory was
  // read (SECCOMP_IOCTL_NOTIF_ID_VALID); false means the answer is moot.
  // Never waits: a decision that may (a question to the run's gates, a
  // blocking connect) comes back as Reply::later, the checked rest of the
  // call, which the caller runs once on the worker Reply::later_on names,
  // under the rules this request was decided by. Everything is done with
  // the tool's file permissions (ToolPermissions): what the kernel would
  // refuse the capless tool, a write to another user's file included, it
  // refuses the emulation too.
  Reply Handle(const Request& req, const std::function<bool()>& still_valid);

  // The supervisor is stopping: blocking calls made for the tool return
  // now (EINTR), and later ones are not made.
  void InterruptBlockingCalls() { blocking_.InterruptAll(); }

 private:
  struct Path {  // a resolved argument
    std::string abs;
    Located loc;
    // Written with a trailing slash ("d/"): the kernel wants a directory
    // there. The rules judge loc (normalised, no slash); the calls made for
    // the tool take name() and rel(), so the kernel answers as it would
    // (EISDIR for open O_CREAT, ENOTDIR for unlink "f/", mkdir "d/" works).
    bool slash = false;
    std::string name() const { return slash ? loc.name + "/" : loc.name; }
    std::string rel() const { return slash && !loc.rel.empty() ? loc.rel + "/" : loc.rel; }
  };
  // Whether a path as the tool wrote it ends in "/" (and is not "/").
  static bool TrailingSlash(const std::string& raw) { return raw.size() > 1 && raw.back() == '/'; }
  // lstat and birth time of a directory entry; born_ns is -1 when the
  // filesystem keeps no birth time.
  struct EntryStat {
    struct stat st {};
    int64_t born_ns = -1;
  };
  static bool StatEntry(int dirfd, const std::string& name, EntryStat& e);
  // A path as the tool wrote it and made absolute.
  struct Named {
    std::string raw;
    std::string abs;
  };
  // `named`, when given, gets the path before the rule lookup (for a
  // bypass of what the lookup refuses).
  // The absolute path of a tool's path argument (tool_path.h's Absolute),
  // through the private HOME's links: a path beneath one of them, while it
  // is still the link the run made, names the granted path it leads to, as
  // the kernel's lookup would. What is written there is then decided for
  // that path (and refused with a hint that grants it), not refused as a
  // symlink on the way. The link itself (the last component) stays the
  // link: it is unlinked or renamed as itself.
  Result<std::string> ToolAbsolute(pid_t tid, int dirfd, const std::string& path) const;
  Result<Path> ResolvePath(const Request& req, int dirfd_arg, uint64_t path_addr, bool empty_ok,
                           Change change = Change::kEntry, Named* named = nullptr);
  Result<Path> Resolve(const Request& req, int dirfd_arg, std::string path, bool empty_ok,
                       Change change = Change::kEntry, Named* named = nullptr);
  Reply Open(const Request& req, int dirfd, uint64_t path, uint64_t flags, uint64_t mode,
             const std::function<bool()>& valid);
  Reply Unlink(const Request& req, int dirfd, uint64_t path, int flags,
               const std::function<bool()>& valid);
  // The rest of a sensitive delete, on a deferred worker: `loc`'s entry
  // (lstat `st` when it was decided; `dir`: an rmdir) held through
  // `parent` for a preview, asked about (RunGates::AskDelete), rechecked
  // and removed. `abs` names it in the refusal's hint.
  Reply AskDelete(const Request& req, const std::shared_ptr<Fd>& parent, const Located& loc,
                  const std::string& abs, const struct stat& st, bool dir,
                  const std::function<bool()>& valid);
  // `rest`, the checked remainder of this request, as a reply for the
  // notify loop to run on a worker of kind `on`, under the rules this
  // request was decided by.
  Reply Later(std::function<Reply()> rest, Reply::Worker on = Reply::Worker::kTool) const;
  Reply Rename(const Request& req, int olddir, uint64_t oldpath, int newdir, uint64_t newpath,
               unsigned flags, const std::function<bool()>& valid);
  Reply Create(const Request& req, int dirfd, uint64_t path, int kind, uint64_t mode_or_target,
               const std::function<bool()>& valid);
  Reply Link(const Request& req, int olddir, uint64_t oldpath, int newdir, uint64_t newpath,
             int flags, const std::function<bool()>& valid);
  Reply Attr(const Request& req, int dirfd, uint64_t path, int at_flags, int kind,
             const std::function<bool()>& valid);
  // `opath_ok`: the call takes an O_PATH descriptor (a path through
  // /proc/self/fd, AT_EMPTY_PATH); fchmod, futimens and the other fd-only
  // calls answer EBADF for one, as the kernel's fdget() does.
  Reply FdAttr(const Request& req, int fd, int kind, const std::function<bool()>& valid,
               bool opath_ok = false);
  // `link` (an O_PATH fd of the symlink at p) followed to what it names,
  // link after link, each beneath a writable root and not protected; p
  // then names the target. EACCES for a link that leads elsewhere.
  Result<Fd> FollowLinks(Path& p, Fd link);
  // Signals, priorities, limits and scheduling aimed at another process
  // (emulator_process.cc).
  Reply ProcessTarget(const Request& req);
  // prctl(PR_SET_DUMPABLE, ...).
  Reply Undumpable(const Request& req);
  // inotify_add_watch(2) on what the tool may read only (emulator_watch.cc).
  Reply Watch(const Request& req, int inotify_fd, uint64_t path, uint32_t mask,
              const std::function<bool()>& valid);
  // What the tool may read: the notify-all rung's read fence, or the same
  // fence built from the policy at the first call that needs it (a watch,
  // a brokered read).
  const ReadFence* Readable();
  // connect(2) (bind false) and bind(2) (emulator_socket.cc).
  Reply SocketName(const Request& req, int fd, uint64_t addr, uint64_t len, bool bind,
                   const std::function<bool()>& valid);
  Reply UnixName(const Request& req, int sock, const std::string& path, bool bind,
                 const std::function<bool()>& valid);
  // listen(2) under network none (emulator_socket.cc): on loopback only.
  // SocketName where the tool's socket cannot be taken (no pidfd_getfd):
  // an AF_UNIX call made on a stand-in (supervisor/socket_stand_in.h).
  Reply StandInName(const Request& req, pid_t tgid, int tool_fd, const sockaddr_storage& addr,
                    uint64_t len, bool bind, const std::function<bool()>& valid);
  Reply Listen(const Request& req, int fd, int backlog);
  // socket(2) of an inet datagram socket under a fenced network mode
  // (emulator_udp.cc): made in the run's private loopback namespace.
  Reply DatagramSocket(const Request& req);
  // The run's private loopback namespace (net/loopback_netns.h), made at
  // the first call; null when none can be made, with *why_not saying why.
  LoopbackNetns* PrivateLoopback(std::string* why_not);
  // The namespace if it was made, without making it.
  LoopbackNetns* MadeLoopback();
  // What a datagram socket of the tool's is stood in with (no pidfd_getfd):
  // under a fenced mode one made in the private loopback, never the host's.
  DatagramMaker StandInDatagrams();

  // Per-operation bypass (policy/bypass.h; emulator_bypass.cc, and
  // emulator_bypass_more.cc for metadata and links: each definition says
  // what it offers and how it performs). The *Places say where a refused
  // change would run, beneath the workspace's root, when policy/bypass.h
  // offers it (`by`: the refusal; kOther: ask the rule lookup), else
  // nullopt. The rest answer `later`: preview, RunGates::AskBypass,
  // recheck, perform; else `refused`, which says why.
  struct BypassEnd;
  std::optional<BypassEnd> BypassEndAt(policy::FileOp op, const Named& path, policy::RefusedBy by,
                                       bool directory = false) const;
  std::optional<Located> BypassPlace(policy::FileOp op, const Named& path, policy::RefusedBy by,
                                     bool directory = false) const;
  using LocatedPair = std::optional<std::pair<Located, Located>>;
  LocatedPair BypassRenamePlaces(const Named& from, const Named& to, policy::RefusedBy from_by,
                                 policy::RefusedBy to_by) const;
  LocatedPair BypassLinkPlaces(const Named& from, const Named& to, policy::RefusedBy from_by,
                               policy::RefusedBy to_by) const;
  Reply BypassOpen(const Request& req, const Located& loc, uint64_t flags, uint64_t mode,
                   const std::string& rule, Reply refused, const std::function<bool()>& valid);
  Reply BypassUnlink(const Request& req, const Located& loc, int flags, const std::string& rule,
                     Reply refused, const std::function<bool()>& valid);
  Reply BypassMkdir(const Request& req, const Located& loc, mode_t mode, const std::string& rule,
                    Reply refused, const std::function<bool()>& valid);
  Reply BypassRename(const Request& req, const Located& from, const Located& to, unsigned flags,
                     const std::string& rule, Reply refused, const std::function<bool()>& valid);
  Reply BypassLink(const Request& req, const Located& from, const Located& to,
                   const std::string& rule, Reply refused, const std::function<bool()>& valid);
  // The metadata call `kind` at `path` (never followed through a link).
  // `fd_file`: an fd form's (fchmod...): `path` is where the tool's
  // descriptor leads, and what is held there must be that file (`fd_file`).
  Reply BypassAttr(const Request& req, const Named& path, int kind, policy::RefusedBy by,
                   const std::string& rule, Reply refused, const std::function<bool()>& valid,
                   const struct stat* fd_file = nullptr);

  // The facts policy::Decide needs, gathered here (emulator_facts.cc).
  policy::PlaceFacts Place(const Located& loc, bool leads = false) const;
  policy::EntryFacts Facts(const struct stat& st, const Located& loc) const;
  static policy::EntryKind KindOf(mode_t mode);
  policy::Settings DecideSettings() const;
  // Whether the directory at `loc` holds an entry besides "." and ".."
  // (for ENOTEMPTY): listed only where a rule would otherwise refuse.
  static bool HasEntries(const Located& loc);
  // rmdir of `p`, refused by its place alone: whether it is a directory the
  // tool sees holding entries (its own lstat finds it, its own listing an
  // entry), with those facts put in `q` (ENOTEMPTY, policy/decide.h).
  static bool HoldsWhatToolSees(const Path& p, policy::FileRequest& q);

  Reply OpenForRead(const Request& req, const std::string& abs, uint64_t flags);
  // A brokered read (wire::kBrokerOpenFlag), on any rung: `abs` opened if
  // the read fence's rule lookup and policy::Decide (FileOp::kRead) let the
  // tool read what it leads to, and installed in the tool.
  Reply OpenBrokered(const Request& req, const std::string& abs, uint64_t flags);
  // policy::Decide(FileOp::kRead) on what the read fence opened for `abs`
  // (`where` beneath one of its roots, `st` its fstat): the refusal, if any.
  // Allowed: `allowed`, when given, gets what the audit log says of it.
  std::optional<Reply> RefuseRead(const ReadFence& fence, const Located& where,
                                  const struct stat& st, const std::string& abs,
                                  std::string* allowed = nullptr) const;
  // /dev/ptmx and the tool's own /dev/pts/N (emulator_pty.cc).
  Reply OpenTerminal(const Request& req, policy::TerminalPath t, uint64_t flags,
                     const std::function<bool()>& valid);
  Reply Exec(const Request& req, int dirfd, uint64_t path, const std::function<bool()>& valid);
  // Tells the gates (RunGates::ExecSeen) of an exec of `abs` (`target`: as
  // the tool sees it).
  void NoteExec(pid_t tid, const std::string& abs, const std::string& target);
  bool BornInRun(const EntryStat& e);
  // The journal's part (emulator_journal.cc): whether it covers `loc` (the
  // workspace), and the records of what changed there.
  bool Journals(const Located& loc) const { return opts_.journal && loc.root->workspace; }
  // `observed` false: the creation is part of a change told already (the
  // new file of an O_TRUNC that kept the old one).
  void NoteCreated(const Located& loc, const struct stat& st, bool observed = true);
  // A metadata change made (allowed or bypassed): a `change` record of
  // the attribute it altered, `kept` when the journal holds its old value.
  void NoteAttrChanged(const Located& loc, policy::AttrOp op, bool kept);
  void NoteMoved(const Located& from, const Located& to, const struct stat& st);
  void NoteDropped(const Located& loc, const struct stat& st);
  void NoteExchanged(const Located& a, const Located& b, const struct stat& a_st,
                     const struct stat& b_st);
  // An existing file opened for writing (`truncated`: with O_TRUNC), not
  // one the run made.
  void NoteWritten(const Located& loc, const struct stat& st, bool truncated);
  // Tells the observer (opts_.observer) of a change made at `loc`.
  void Observe(const char* kind, const Located& loc, const Located* to, bool kept);
  // Moves the entry `name` of `parent` (at `loc`, lstat `st`) into the
  // journal; a refusal says why and what to do.
  // A bypass in a recoverable run keeps the user's file it removes or
  // replaces ("delete", "replace": moved into the journal, *moved set, so
  // the caller makes no unlink) or writes over ("truncate": copied first),
  // as an allowed change would; nothing when there is no journal, or the
  // file is not a regular one or is the run's own. nullopt, or the refusal.
  std::optional<Reply> KeepForBypass(const Located& loc, int parent, int fd, const struct stat& st,
                                     const char* why, bool* moved = nullptr);
  std::optional<Reply> Keep(const Located& loc, int parent, const std::string& name,
                            const struct stat& st, const char* why);
  // Before a metadata change: whether the entry `target` (`st`) at `loc`
  // is the run's own (EntryFacts::born_in_run), and policy::MetadataKeep
  // on its facts. KeepAttrs then records the old value of each attribute
  // `args` alters (policy::AttrsAltered) in the journal; nullopt, or the
  // refusal when it cannot (the change is then not made).
  bool EntryBornInRun(int target);
  policy::Keep AttrKeep(const Located& loc, int target, const struct stat& st);
  std::optional<Reply> KeepAttrs(const Located& loc, int target, const AttrArgs& args);
  // Keeps a copy of the file `fd` (at `loc`) before it is written in
  // place, then runs `then`, the rest of the call. One the journal cannot
  // keep (larger than limits.journalCopyBytes, no reflink) is asked about
  // (RunGates::AskWrite) for the call `req`: the reply is `later`, which
  // asks, rechecks `fd` and runs `then`.
  Reply KeepCopy(const Located& loc, std::shared_ptr<Fd> fd, const struct stat& st,
                 const Request& req, const std::function<bool()>& valid,
                 std::function<Reply()> then);
  // open(O_TRUNC) of a file of the user's: a new empty file with the same
  // mode takes its name, and the old one goes into the journal.
  Reply TruncateKept(const Located& loc, uint64_t flags, const struct stat& old);
  // The undo of a file made for the tool at `loc` (`st`) whose fd could
  // not be installed: removed again, if it is still that file.
  std::function<void()> UndoCreate(const Located& loc, const struct stat& st);
  bool Protected(const Located& loc) const;
  // Where a path lies against the workspace's repositories: protected, or
  // the config of a repository this run made (guarded by content).
  struct RepoFacts {
    bool protected_path = false;
    bool guarded_config = false;
    bool users_config = false;  // guarded, and the user's before the run
    bool new_worktree_link = false;  // protected too (policy::PlaceFacts)
    bool removable_link = false;     // protected too (policy::PlaceFacts)
  };
  RepoFacts RepoPlace(const Located& loc) const;
  // A file about to take a guarded config's place, as read and checked
  // (supervisor/emulator_gitconfig.cc): the bytes, their verdict, and the
  // keys that run a program, for the refusal (" (sets core.pager)").
  struct CheckedFile {
    policy::ContentFact fact = policy::ContentFact::kUnknown;
    std::string bytes;
    struct stat st {};
    std::string keys;
  };
  // `users`: `loc` takes the place of a config the user had, at `target`;
  // its content is checked against that one's.
  CheckedFile ReadChecked(const Located& loc, const Located* users = nullptr) const;
  // open(O_CREAT) of a new worktree's commondir (Decision::make_link):
  // made beneath its parent with policy::kWorktreeCommonDir and no other
  // content, under its name only if none is there; the tool gets a memfd
  // for its bytes. An existing one is refused as the protected path it is.
  Reply MakeWorktreeLink(const Request& req, const Path& p, policy::FileRequest q, uint64_t flags,
                         uint64_t mode, const std::function<bool()>& valid);
  // FIFOs (emulator_fifo.cc). MadeFifo: one this supervisor made for the
  // tool (mknod), not laundered. OpenFifo: the inode `held` names opened
  // with the tool's `flags`, on a deferred thread when it would wait.
  // MadeFifoAt records one made at `abs` (MovedFifo: renamed there);
  // RemoveFifosLeft removes them at the run's end.
  bool MadeFifo(const struct stat& st) const;
  Reply OpenFifo(std::shared_ptr<Fd> held, uint64_t flags);
  // The notify-all rung's read of `target` (`abs`) if a FIFO, else nullopt.
  std::optional<Reply> ReadFifo(const std::string& target, const std::string& abs, uint64_t flags);
  void MadeFifoAt(const std::string& abs, const struct stat& st);
  void MovedFifo(const struct stat& st, const std::string& abs);
  void RemoveFifosLeft();
  // Gitfiles the tool wrote, read at the run's end (emulator_gitfile.cc).
  void NoteGitFile(const std::string& abs);
  void CheckGitFilesLeft();
  // A name beside `name` for a file the supervisor makes before it takes
  // `name`'s place: "NAME.cordon-" and 16 random hex digits (empty when no
  // randomness could be had).
  static std::string TempSibling(const std::string& name);
  // Puts `c`'s bytes at to_dir/to_name as a new file (same mode and owner)
  // and removes from_dir/from_name if it is still the file read: what the
  // rename would have done, with no inode the tool may still write to.
  Reply PutChecked(const CheckedFile& c, int from_dir, const std::string& from_name, int to_dir,
                   const std::string& to_name);
  // An entry of a shared directory (WriteRoot::own_entries_only) that this
  // supervisor did not make for the tool: someone else's, untouchable.
  bool NotOwn(const Located& loc, const struct stat& st) const {
    return loc.root->own_entries_only && !created_.Contains(st.st_dev, st.st_ino);
  }

  // The rules of the request this thread is deciding (the snapshot Handle
  // took), else those in force.
  const Rules& rules() const;
  // The answer to every notified call while a reload holds the guard.
  static Reply Guarded(int nr);

  std::shared_ptr<LiveRules> live_;
  std::unique_ptr<ReadFence> read_fence_;  // null unless on the notify-all rung
  std::once_flag watch_fence_once_;
  std::unique_ptr<ReadFence> watch_fence_;  // Readable() on the Landlock rung
  int64_t run_start_ns_;
  EmulatorOptions opts_;
  // Run-born inodes moved over a file of the user's: not freely deletable.
  InodeSet laundered_;
  // Inodes this supervisor created for the tool: the run's own whatever
  // their birth time says (a coarse timestamp can predate run_start_ns_).
  InodeSet created_;
  // Files of the user's an approval let the tool write in place unkept:
  // not asked about again in this run.
  InodeSet written_unkept_;
  // The pseudo-terminal pairs this run made (their numbers).
  std::mutex ptys_mu_;
  std::set<int> ptys_;
  // Whether a file was made in a shared directory (the destructor's sweep).
  std::atomic<bool> made_shared_{false};
  // What the end of the run looks at again, under end_lists_mu_: the FIFOs
  // the run made (MadeFifoAt) and the gitfiles it wrote (NoteGitFile).
  std::mutex end_lists_mu_;
  std::vector<std::pair<std::string, std::pair<dev_t, ino_t>>> fifos_;
  std::vector<std::string> gitfiles_;
  // Both sets name inodes by number, and a filesystem gives a freed number
  // to its next new file (git's index.lock, made and renamed over index
  // again and again). An inode the supervisor creates is new whatever its
  // number held before; one whose last name the tool removes is forgotten.
  void Born(const struct stat& st);
  void Gone(const struct stat& st);
  UmaskCache umask_;
  BlockingCalls blocking_;
  StandIns stand_ins_;
  std::mutex loopback_mu_;
  bool loopback_tried_ = false;              // guarded by loopback_mu_
  std::unique_ptr<LoopbackNetns> loopback_;  // set once, under loopback_mu_
  std::atomic<LoopbackNetns*> loopback_made_{nullptr};
  std::string no_loopback_;  // why none could be made; guarded by loopback_mu_
  std::atomic<bool> said_no_loopback_{false};
};

// A call that needs the tool's own descriptor (a socket no stand-in is made
// for, an inotify instance) where pidfd_getfd is refused: EBADF, and said
// once a run with the fix, as the tool sees only EBADF.
Reply NoPidfdGetfd(const std::string& what);

}  // namespace cordon::supervisor
