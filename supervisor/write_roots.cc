#include "supervisor/write_roots.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "policy/policy.h"
#include "supervisor/uapi.h"

namespace cordon::supervisor {

bool NormaliseNoDotDot(const std::string& in, std::string& out) {
  out.clear();
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    if (in[i] == '/') {
      ++i;
      continue;
    }
    size_t j = in.find('/', i);
    if (j == std::string::npos) j = in.size();
    std::string_view seg(in.data() + i, j - i);
    if (seg == "..") return false;
    if (seg != ".") {
      out += '/';
      out.append(seg);
    }
    i = j;
  }
  if (out.empty()) out = "/";
  return true;
}

Result<WriteRoots> WriteRoots::Open(const std::vector<std::string>& paths,
                                    const std::string& workspace,
                                    const std::vector<std::string>& excluded,
                                    const std::vector<std::string>& shared) {
  WriteRoots r;
  for (const auto& p : paths) {
    Fd fd(::open(p.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!fd) return Errno("open write root", p);
    r.roots_.push_back({p, std::move(fd), p == workspace});
  }
  for (const auto& p : shared) {
    Fd fd(::open(p.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!fd) return Errno("open shared directory", p);
    r.roots_.push_back({p, std::move(fd), false, true});
  }
  for (const auto& x : excluded) {
    const WriteRoot* root = nullptr;
    for (const auto& w : r.roots_) {
      if (policy::IsWithin(x, w.path) && x != w.path) root = &w;
    }
    if (root == nullptr) continue;
    r.excluded_.push_back(x);
    // Pin the path and every directory between it and the root.
    for (std::string cur = x; cur.size() > root->path.size(); cur = cur.substr(0, cur.rfind('/'))) {
      struct stat st;
      if (::lstat(cur.c_str(), &st) == 0) r.pinned_.insert({st.st_dev, st.st_ino});
    }
  }
  return r;
}

bool WriteRoots::IsPinned(dev_t dev, ino_t ino) const { return pinned_.count({dev, ino}) > 0; }

Result<Located> WriteRoots::Locate(const std::string& abs_path) const {
  std::string norm;
  if (!NormaliseNoDotDot(abs_path, norm)) return SysError{EACCES, "raw .. segment", abs_path};
  const WriteRoot* best = nullptr;
  for (const auto& r : roots_) {
    if (policy::IsWithin(norm, r.path) && (!best || r.path.size() > best->path.size())) best = &r;
  }
  if (best == nullptr) return SysError{EACCES, "outside every allowed path", norm};
  for (const auto& x : excluded_) {
    if (policy::IsWithin(norm, x)) return SysError{EACCES, "denied, read-only or protected path", x};
  }
  Located loc;
  loc.root = best;
  loc.rel = norm.size() == best->path.size() ? "" : norm.substr(best->path.size() + 1);
  if (best->own_entries_only && loc.rel.find('/') != std::string::npos) {
    return SysError{EACCES, "below the top level of a shared directory", best->path};
  }
  if (!loc.rel.empty()) {
    auto slash = loc.rel.rfind('/');
    loc.parent_rel = slash == std::string::npos ? "." : loc.rel.substr(0, slash);
    loc.name = slash == std::string::npos ? loc.rel : loc.rel.substr(slash + 1);
  } else {
    loc.parent_rel = ".";
  }
  return loc;
}

Result<Fd> WriteRoots::OpenBeneath(const WriteRoot& root, const std::string& rel, uint64_t flags,
                                   uint64_t mode) {
  uapi::OpenHow how{flags | O_CLOEXEC, mode,
                    uapi::kResolveBeneath | uapi::kResolveNoSymlinks | uapi::kResolveNoMagiclinks |
                        uapi::kResolveNoXdev};
  long fd = ::syscall(uapi::kNrOpenat2, root.fd.get(), rel.empty() ? "." : rel.c_str(), &how,
                      sizeof how);
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP || err == EXDEV) return SysError{EACCES, "symlink or mount on the way", rel};
    return SysError{err, "openat2", rel};
  }
  return Fd(static_cast<int>(fd));
}

Result<Fd> WriteRoots::OpenParent(const Located& loc) {
  return OpenBeneath(*loc.root, loc.parent_rel, O_PATH | O_DIRECTORY, 0);
}

}  // namespace cordon::supervisor
