#include "supervisor/delete_preview.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "policy/digest.h"
#include "supervisor/file_digest.h"

namespace cordon::supervisor {
namespace {

int64_t Ns(const timespec& t) { return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec; }

// The name is shown on a terminal and sent as JSON: control characters
// could forge a prompt, and invalid UTF-8 cannot travel as JSON text.
bool PrintableUtf8(const std::string& s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  try {
    (void)nlohmann::json(s).dump();  // strict: throws on invalid UTF-8
  } catch (const nlohmann::json::exception&) {
    return false;
  }
  return true;
}

bool SameIdentity(const struct stat& st, const policy::DeletePreview& p) {
  if (p.directory) {
    return S_ISDIR(st.st_mode) && st.st_dev == p.dev && st.st_ino == p.ino &&
           Ns(st.st_mtim) == p.mtime_ns && Ns(st.st_ctim) == p.ctime_ns;
  }
  return st.st_dev == p.dev && st.st_ino == p.ino && static_cast<uint64_t>(st.st_size) == p.size &&
         Ns(st.st_mtim) == p.mtime_ns && Ns(st.st_ctim) == p.ctime_ns;
}

// `name` in `parent_dirfd` still names the previewed inode.
Status SameName(int parent_dirfd, const char* name, const policy::DeletePreview& p) {
  struct stat entry;
  if (::fstatat(parent_dirfd, name, &entry, AT_SYMLINK_NOFOLLOW) != 0) {
    return SysError{ESTALE, "recheck", p.rel_path + ": name no longer exists"};
  }
  if (entry.st_dev != p.dev || entry.st_ino != p.ino) {
    return SysError{ESTALE, "recheck", p.rel_path + ": name now refers to another file"};
  }
  return Ok();
}

}  // namespace

namespace {

// Every name a preview shows: relative, printable, valid UTF-8.
Status CheckName(const std::string& rel_path) {
  if (rel_path.empty() || rel_path[0] == '/' || !PrintableUtf8(rel_path)) {
    return SysError{EINVAL, "preview", "name is not a printable relative UTF-8 path"};
  }
  return Ok();
}

// The start of every preview: the name checked, the fd's identity taken.
Result<policy::DeletePreview> Identified(int fd, std::string rel_path, struct stat& st) {
  if (Status s = CheckName(rel_path); !s) return s.error();
  if (::fstat(fd, &st) != 0) return Errno("fstat", rel_path);
  policy::DeletePreview p;
  p.rel_path = std::move(rel_path);
  p.dev = st.st_dev;
  p.ino = st.st_ino;
  p.mtime_ns = Ns(st.st_mtim);
  p.ctime_ns = Ns(st.st_ctim);
  return p;
}

}  // namespace

Result<policy::DeletePreview> MakePreview(int fd, std::string rel_path, uint64_t max_bytes) {
  struct stat st;
  Result<policy::DeletePreview> identified = Identified(fd, std::move(rel_path), st);
  if (!identified) return identified.error();
  policy::DeletePreview& p = identified.value();
  if (!S_ISREG(st.st_mode)) return SysError{EPERM, "preview", p.rel_path + ": not a regular file"};
  if (st.st_nlink != 1) {
    return SysError{EMLINK, "preview",
                    p.rel_path + ": has " + std::to_string(st.st_nlink) + " links"};
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return SysError{EFBIG, "preview", p.rel_path + ": larger than " + std::to_string(max_bytes)};
  }
  auto hash = Sha256Fd(fd, max_bytes);
  if (!hash) return hash.error();
  p.size = static_cast<uint64_t>(st.st_size);
  p.sha256 = std::move(hash.value());
  // A write during hashing would make the digest describe no real state.
  struct stat after;
  if (::fstat(fd, &after) != 0) return Errno("fstat", p.rel_path);
  if (!SameIdentity(after, p) || after.st_nlink != 1) {
    return SysError{EAGAIN, "preview", p.rel_path + ": changed while hashing"};
  }
  return identified;
}

Result<policy::DeletePreview> MakeDirPreview(int fd, std::string rel_path) {
  struct stat st;
  Result<policy::DeletePreview> p = Identified(fd, std::move(rel_path), st);
  if (!p) return p.error();
  if (!S_ISDIR(st.st_mode)) return SysError{ENOTDIR, "preview", p->rel_path + ": not a directory"};
  p->directory = true;
  return p;
}

Result<policy::DeletePreview> MakeWritePreview(int fd, std::string rel_path) {
  struct stat st;
  Result<policy::DeletePreview> p = Identified(fd, std::move(rel_path), st);
  if (!p) return p.error();
  if (!S_ISREG(st.st_mode)) return SysError{EPERM, "preview", p->rel_path + ": not a regular file"};
  p->write_in_place = true;
  p->size = static_cast<uint64_t>(st.st_size);
  return p;
}

namespace {

// What a bypass preview holds of the entry on `fd` for `op`.
Result<policy::DeletePreview> Identify(int fd, std::string rel_path, const std::string& op) {
  Result<policy::DeletePreview> p = SysError{EINVAL, "preview", "no such operation"};
  if (op == "unlink") {
    p = MakePreview(fd, std::move(rel_path));
  } else if (op == "rmdir") {
    p = MakeDirPreview(fd, std::move(rel_path));
  } else if ((op == "open" || op == "mkdir") && fd < 0) {
    if (Status s = CheckName(rel_path); !s) return s.error();
    policy::DeletePreview absent;
    absent.rel_path = std::move(rel_path);
    p = std::move(absent);
  } else if (op == "open" || op == "rename" || op == "link" || policy::IsAttrBypass(op)) {
    // A directory moved, or whose metadata changes: its identity.
    struct stat st;
    if (::fstat(fd, &st) != 0) return Errno("fstat", rel_path);
    const bool dir_ok = op == "rename" || policy::IsAttrBypass(op);
    if (dir_ok && S_ISDIR(st.st_mode)) return MakeDirPreview(fd, std::move(rel_path));
    // A file opened for writing, moved, linked or whose metadata changes:
    // its identity, one link.
    p = MakeWritePreview(fd, std::move(rel_path));
    if (p && st.st_nlink != 1) {
      return SysError{EMLINK, "preview", p->rel_path + ": not a file with one link"};
    }
  }
  return p;
}

}  // namespace

Result<policy::DeletePreview> MakeBypassPreview(int fd, std::string rel_path, std::string op,
                                                uint64_t open_flags, std::string rule,
                                                std::string args) {
  Result<policy::DeletePreview> p = Identify(fd, std::move(rel_path), op);
  if (!p) return p.error();
  p->write_in_place = false;
  p->bypass = std::move(op);
  p->open_flags = open_flags;
  p->bypass_rule = std::move(rule);
  if (policy::IsAttrBypass(p->bypass)) {
    // The arguments are shown on a terminal and sent as JSON, as the name.
    if (args.empty() || !PrintableUtf8(args)) {
      return SysError{EINVAL, "preview", "arguments are not printable UTF-8"};
    }
    p->args = std::move(args);
  }
  return p;
}

Result<policy::DeletePreview> MakeRenamePreview(int from_fd, std::string from_rel, int to_fd,
                                                std::string to_rel, std::string rule,
                                                std::string op) {
  Result<policy::DeletePreview> p =
      MakeBypassPreview(from_fd, std::move(from_rel), std::move(op), 0, std::move(rule));
  if (!p) return p.error();
  if (to_fd < 0) {
    if (Status s = CheckName(to_rel); !s) return s.error();
    p->to.rel_path = std::move(to_rel);
    return p;
  }
  Result<policy::DeletePreview> replaced = MakePreview(to_fd, std::move(to_rel));
  if (!replaced) return replaced.error();
  p->to = policy::DeletePreview::DestinationOf(*replaced);
  return p;
}

Status RecheckRename(int from_fd, int from_dirfd, const char* from_name, int to_fd, int to_dirfd,
                     const char* to_name, const policy::DeletePreview& p) {
  if (Status s = Recheck(from_fd, from_dirfd, from_name, p); !s) return s;
  if (to_fd < 0) return Ok();  // a free name: the rename is made RENAME_NOREPLACE
  return Recheck(to_fd, to_dirfd, to_name, p.ReplacedPreview());
}

Status Recheck(int fd, int parent_dirfd, const char* name, const policy::DeletePreview& p) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Errno("fstat", p.rel_path);
  if (!SameIdentity(st, p) || (!p.directory && !p.write_in_place && st.st_nlink != 1)) {
    return SysError{ESTALE, "recheck", p.rel_path + ": identity changed since the preview"};
  }
  if (p.write_in_place || p.bypass == "open" || policy::IsAttrBypass(p.bypass)) return Ok();
  if (p.directory || p.bypass == "rename" || p.bypass == "link") {
    return SameName(parent_dirfd, name, p);
  }
  auto hash = Sha256Fd(fd, p.size);
  if (!hash) {
    return SysError{ESTALE, "recheck", p.rel_path + ": content changed since the preview"};
  }
  if (!policy::DigestEquals(hash.value(), p.sha256)) {
    return SysError{ESTALE, "recheck", p.rel_path + ": content changed since the preview"};
  }
  return SameName(parent_dirfd, name, p);
}

}  // namespace cordon::supervisor
