// A new repository's config (issue 27 item 7): git renames its lock file
// over it; the supervisor reads what would take its place, policy decides
// from the keys it sets (policy/git_config_keys.h, policy/decide.h), and
// the checked bytes, not the lock file's inode, are put in place.
// A new worktree's commondir (git worktree add): made by the supervisor
// with the content git writes (policy/git_worktree.h).
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "policy/git_config_keys.h"
#include "policy/git_worktree.h"
#include "supervisor/creation_umask.h"
#include "supervisor/emulator.h"

namespace cordon::supervisor {
namespace {

// A config larger than this is not a config git writes: refused unread.
constexpr std::size_t kMaxConfigBytes = 1u << 20;

}  // namespace

namespace {

// The bytes of the regular file at `loc` (at most kMaxConfigBytes), and its
// stat; false when it is no such file or cannot be read whole.
bool ReadConfig(const Located& loc, std::string* bytes, struct stat* st) {
  auto fd = WriteRoots::OpenBeneath(*loc.root, loc.rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
  if (!fd || ::fstat(fd->get(), st) != 0 || !S_ISREG(st->st_mode) ||
      static_cast<std::size_t>(st->st_size) > kMaxConfigBytes) {
    return false;
  }
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd->get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    bytes->append(buf, static_cast<std::size_t>(n));
    if (bytes->size() > kMaxConfigBytes) return false;  // grew while read
  }
}

}  // namespace

Emulator::CheckedFile Emulator::ReadChecked(const Located& loc, const Located* users) const {
  CheckedFile c;
  c.fact = policy::ContentFact::kUnreadable;
  if (!ReadConfig(loc, &c.bytes, &c.st)) return c;
  std::vector<std::string> keys;
  if (users != nullptr) {
    std::string before;
    struct stat st {};
    if (!ReadConfig(*users, &before, &st)) return c;
    keys = policy::ChangedBeyondRegistration(before, c.bytes);
    c.fact = keys.empty() ? policy::ContentFact::kSafe : policy::ContentFact::kChangesUsers;
    for (const std::string& k : keys) c.keys += (c.keys.empty() ? " (changes " : ", ") + k;
    if (!c.keys.empty()) c.keys += ")";
    return c;
  }
  keys = policy::RunnableGitConfigKeys(c.bytes);
  c.fact = keys.empty() ? policy::ContentFact::kSafe : policy::ContentFact::kRunnable;
  for (const std::string& k : keys) c.keys += (c.keys.empty() ? " (sets " : ", ") + k;
  if (!c.keys.empty()) c.keys += ")";
  return c;
}

std::string Emulator::TempSibling(const std::string& name) {
  unsigned char rnd[8];
  if (::getrandom(rnd, sizeof rnd, 0) != static_cast<ssize_t>(sizeof rnd)) return {};
  char suffix[2 * sizeof rnd + 1];
  for (std::size_t i = 0; i < sizeof rnd; ++i) std::snprintf(suffix + 2 * i, 3, "%02x", rnd[i]);
  return name + ".cordon-" + suffix;
}

Reply Emulator::PutChecked(const CheckedFile& c, int from_dir, const std::string& from_name,
                           int to_dir, const std::string& to_name) {
  const std::string tmp = TempSibling(to_name);
  if (tmp.empty()) return Reply::Errno(EIO);
  Fd out(::openat(to_dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  c.st.st_mode & 07777));
  if (!out) return Reply::Errno(errno);
  auto fail = [&](int err) {
    (void)::unlinkat(to_dir, tmp.c_str(), 0);
    return Reply::Errno(err);
  };
  for (std::size_t done = 0; done < c.bytes.size();) {
    ssize_t n = ::write(out.get(), c.bytes.data() + done, c.bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(errno);
    done += static_cast<std::size_t>(n);
  }
  // The lock file's owner and mode, as the rename would have kept them.
  (void)::fchown(out.get(), c.st.st_uid, c.st.st_gid);
  if (::fchmod(out.get(), c.st.st_mode & 07777) != 0) return fail(errno);
  struct stat made;
  if (::fstat(out.get(), &made) != 0) return fail(errno);
  if (::renameat(to_dir, tmp.c_str(), to_dir, to_name.c_str()) != 0) return fail(errno);
  Born(made);
  // The source goes, as a rename takes it: only if it is still the file read.
  struct stat now;
  if (::fstatat(from_dir, from_name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
      now.st_dev == c.st.st_dev && now.st_ino == c.st.st_ino) {
    (void)::unlinkat(from_dir, from_name.c_str(), 0);
  }
  return Reply{};
}

Reply Emulator::MakeWorktreeLink(const Request& req, const Path& p, policy::FileRequest q,
                                 uint64_t flags, uint64_t mode,
                                 const std::function<bool()>& valid) {
  const std::string what = "open for writing " + p.abs;
  auto parent = WriteRoots::OpenParent(p.loc);
  if (!parent) return Reply::Errno(parent.error().err);
  const std::string& name = p.loc.name;
  // One that is there already: the protected path it is, unless the
  // kernel's own answer comes first.
  auto existing = [&]() -> Reply {
    struct stat st;
    if (::fstatat(parent->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return Reply::Errno(errno);
    }
    if ((flags & O_CREAT) && (flags & O_EXCL)) return Reply::Errno(EEXIST);
    q.entry = Facts(st, p.loc);
    return Reply::Refused(policy::Decide(q, DecideSettings()), what, p.abs);
  };
  if (!(flags & O_CREAT)) return existing();
  auto umask = umask_.Get(req.tid, valid);
  if (!umask) return Reply::Errno(EACCES, "stale");
  CreationUmask creation(umask.value());
  const std::string tmp = TempSibling(name);
  if (tmp.empty()) return Reply::Errno(EIO);
  Fd out(::openat(parent->get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  creation.Mode(static_cast<mode_t>(mode))));
  if (!out) return Reply::Errno(errno);
  auto fail = [&](int err) {
    (void)::unlinkat(parent->get(), tmp.c_str(), 0);
    return Reply::Errno(err);
  };
  const std::string_view text = policy::kWorktreeCommonDir;
  if (!creation.FixMode(out.get(), static_cast<mode_t>(mode)) ||
      ::write(out.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    return fail(errno);
  }
  struct stat made;
  if (::fstat(out.get(), &made) != 0) return fail(errno);
  // Under the name only if none is there: the tool's own file, had it made
  // one meanwhile, is not replaced.
  if (::renameat2(parent->get(), tmp.c_str(), parent->get(), name.c_str(), RENAME_NOREPLACE) != 0) {
    const int err = errno;
    (void)::unlinkat(parent->get(), tmp.c_str(), 0);
    return err == EEXIST ? existing() : Reply::Errno(err);
  }
  Born(made);
  NoteCreated(p.loc, made);
  // What the tool writes goes here, read by nobody.
  Reply r;
  r.install = Fd(::memfd_create("cordon-commondir", MFD_CLOEXEC));
  r.undo = UndoCreate(p.loc, made);
  if (!r.install) {
    const int err = errno;
    r.undo();
    return Reply::Errno(err);
  }
  r.install_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
  return r;
}

}  // namespace cordon::supervisor
