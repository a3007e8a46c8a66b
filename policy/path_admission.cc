#include "policy/path_admission.h"

#include <cerrno>
#include <cstring>

namespace cordon::policy {
namespace {

// Appends the segments of `in` to out[0..len), dropping "." and empty ones.
// A ".." segment is refused (-EACCES) without looking further: it is
// refused as written, before anything is resolved.
long AppendSegments(const char* in, std::size_t n, char* out, std::size_t len) {
  std::size_t i = 0;
  while (i < n) {
    while (i < n && in[i] == '/') ++i;
    std::size_t start = i;
    while (i < n && in[i] != '/') ++i;
    std::size_t seg = i - start;
    if (seg == 0 || (seg == 1 && in[start] == '.')) continue;
    if (seg == 2 && in[start] == '.' && in[start + 1] == '.') return -EACCES;
    if (len + 1 + seg >= kAdmissionMaxPath) return -ENAMETOOLONG;
    out[len++] = '/';
    std::memcpy(out + len, in + start, seg);
    len += seg;
  }
  return static_cast<long>(len);
}

// The leading ".." segments of a relative path ("." and empty segments
// between them skipped): how many there are, and where the rest begins.
std::size_t LeadingParents(std::string_view path, std::size_t* rest) {
  std::size_t ups = 0;
  std::size_t i = 0;
  for (;;) {
    while (i < path.size() && path[i] == '/') ++i;
    std::size_t j = i;
    while (j < path.size() && path[j] != '/') ++j;
    std::string_view seg = path.substr(i, j - i);
    if (seg == "..") {
      ++ups;
    } else if (seg != ".") {
      break;  // a name, or the end
    }
    i = j;
  }
  *rest = i;
  return ups;
}

// NormalizePath() for a relative path: the base's segments, less one per
// leading "..", then the rest's. The base is the kernel's name of the cwd
// or the dirfd, a physical path, so its parent is what ".." resolves to
// (the kernel's own walk up, mount points included): no alias. A ".." after
// a name ("a/../b", "../a/../b") is one, since "a" may be a symlink, and is
// refused as written (for a read, left to the kernel: AdmitPath). Out of line: the
// absolute path every interposed call takes does not carry this 4 KiB
// scratch buffer on its stack (each stack page touched costs a TLB miss
// after every syscall).
__attribute__((noinline)) long JoinRelative(std::string_view path, const char* base, char* out) {
  if (base == nullptr || base[0] != '/') return -EINVAL;
  std::size_t blen = ::strnlen(base, kAdmissionMaxPath);
  if (blen >= kAdmissionMaxPath) return -ENAMETOOLONG;
  std::size_t rest = 0;
  std::size_t ups = LeadingParents(path, &rest);
  char probe[kAdmissionMaxPath];
  long p = AppendSegments(path.data() + rest, path.size() - rest, probe, 0);
  if (p < 0) return p;
  long len = AppendSegments(base, blen, out, 0);
  if (len == -EACCES) return -EINVAL;  // the base comes from the kernel: normal or broken
  if (len < 0) return len;
  for (; ups > 0 && len > 0; --ups) {  // never above "/"
    while (out[len - 1] != '/') --len;
    --len;
  }
  if (static_cast<std::size_t>(len + p) >= kAdmissionMaxPath) return -ENAMETOOLONG;
  std::memcpy(out + len, probe, static_cast<std::size_t>(p));
  return len + p;
}


}  // namespace

long NormalizePath(std::string_view path, const char* base, char* out) {
  if (path.empty()) return -ENOENT;
  if (std::memchr(path.data(), '\0', path.size()) != nullptr) return -EINVAL;
  if (path.size() >= kAdmissionMaxPath) return -ENAMETOOLONG;
  // The ".." rule looks at the path as written, before the base is joined
  // and before anything else: "a/../b" is refused even though it would
  // resolve to "b"; only a relative path's leading ".." climb the base.
  long len = path[0] == '/' ? AppendSegments(path.data(), path.size(), out, 0)
                            : JoinRelative(path, base, out);
  if (len < 0) return len;
  if (len == 0) out[len++] = '/';
  out[len] = '\0';
  return len;
}

int AdmissionTable::Insert(std::string_view path, Access kind) {
  if (!IsAbsoluteNormal(path) || count_ >= kAdmissionMaxRules) return -1;
  if (used_ + path.size() > kAdmissionArenaBytes) return -1;
  std::memcpy(arena_ + used_, path.data(), path.size());
  rules_[count_] = Rule{static_cast<std::uint32_t>(used_), static_cast<std::uint32_t>(path.size()),
                        kind};
  used_ += path.size();
  return static_cast<int>(count_++);
}

bool AdmissionTable::SetWorkspace(std::string_view root, Access kind) {
  if (kind == Access::kDenied || root == "/") return false;
  int i = Insert(root, kind);
  if (i < 0) return false;
  workspace_ = i;
  return true;
}

bool AdmissionTable::Add(std::string_view path, Access kind) { return Insert(path, kind) >= 0; }

PathClass AdmissionTable::Classify(std::string_view normal) const {
  long best = CoveringRule(
      count_, normal,
      [this](std::size_t i) { return std::string_view(arena_ + rules_[i].offset, rules_[i].len); },
      [this](std::size_t i) { return rules_[i].kind; });
  if (best < 0) return PathClass::kOutside;
  const Rule& r = rules_[best];
  if (r.kind == Access::kDenied) return PathClass::kDenied;
  // A rule with the workspace's own path and the workspace's kind is the
  // workspace (the tie-break may have picked a duplicate entry).
  if (workspace_ >= 0) {
    const Rule& w = rules_[workspace_];
    if (r.len == w.len && r.kind == w.kind &&
        std::memcmp(arena_ + r.offset, arena_ + w.offset, r.len) == 0) {
      return PathClass::kWorkspace;
    }
  }
  return r.kind == Access::kReadWrite ? PathClass::kReadWrite : PathClass::kReadOnly;
}

Admission AdmitPath(const AdmissionTable& table, AdmitOp op, std::string_view path,
                    const char* base) {
  char normal[kAdmissionMaxPath];
  long n = NormalizePath(path, base, normal);
  if (n < 0) {
    switch (-n) {
      case EACCES:
        // A read is left to the kernel, which judges the physical path: a
        // compiler's "/usr/lib/gcc/x86_64-linux-gnu/12/../../../crti.o",
        // "gcc -I src/../include", git's "sub/../.git/modules/sub/HEAD".
        // Landlock's grants are on inodes, so "a/.." where "a" is a symlink
        // reaches nothing it does not grant (and the notify-all rung, which
        // has no Landlock, refuses it in the supervisor). A mutation is
        // judged here by the lexical path, so it is refused as written.
        if (op == AdmitOp::kRead) {
          return {AdmitVerdict::kAdmit, PathClass::kReadOnly, 0, "'..' left to the kernel"};
        }
        return {AdmitVerdict::kRefuse, PathClass::kMalformed, EACCES, "raw '..' segment"};
      case ENAMETOOLONG:
        return {AdmitVerdict::kRefuse, PathClass::kMalformed, ENAMETOOLONG, "path too long"};
      case ENOENT: return {AdmitVerdict::kRefuse, PathClass::kMalformed, ENOENT, "empty path"};
      default:
        return {AdmitVerdict::kRefuse, PathClass::kMalformed, EINVAL,
                path.size() > 0 && path[0] != '/' ? "relative path without a known base"
                                                   : "embedded NUL"};
    }
  }
  return AdmitClass(table.Classify(std::string_view(normal, static_cast<std::size_t>(n))), op,
                    table.workspace_writable());
}

Admission AdmitClass(PathClass c, AdmitOp op, bool workspace_rw) {
  switch (c) {
    case PathClass::kDenied:
      return {AdmitVerdict::kRefuse, c, EACCES, "denied path"};
    case PathClass::kOutside:
      return {AdmitVerdict::kRefuse, c, EACCES,
              op == AdmitOp::kRead ? "outside the workspace and the read-only set"
                                   : "mutation outside the workspace"};
    case PathClass::kReadOnly:
      if (op == AdmitOp::kMutate) return {AdmitVerdict::kRefuse, c, EACCES, "mutation in the read-only set"};
      return {AdmitVerdict::kAdmit, c, 0, "read-only set"};
    case PathClass::kReadWrite:
      return {AdmitVerdict::kAdmit, c, 0, "read-write path"};
    case PathClass::kWorkspace:
      if (op == AdmitOp::kMutate && !workspace_rw) {
        return {AdmitVerdict::kRefuse, c, EACCES, "mutation in a read-only workspace"};
      }
      return {AdmitVerdict::kAdmit, c, 0, "inside the workspace"};
    case PathClass::kMalformed:
    case PathClass::kHeldFd:  // never a result of Classify
      break;
  }
  return {AdmitVerdict::kRefuse, PathClass::kMalformed, EINVAL, "malformed path"};
}

bool HasParentSegment(std::string_view path) {
  std::size_t i = 0;
  while (i < path.size()) {
    std::size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (path.substr(i, j - i) == "..") return true;
    i = j + 1;
  }
  return false;
}

bool IsAbsoluteNormal(std::string_view p) {
  if (p.empty() || p[0] != '/' || p.size() >= kAdmissionMaxPath) return false;
  if (p.size() == 1) return true;
  if (p.back() == '/') return false;
  std::size_t i = 1;
  while (i <= p.size()) {
    std::size_t j = i;
    while (j < p.size() && p[j] != '/') ++j;
    std::size_t seg = j - i;
    if (seg == 0) return false;
    if (seg == 1 && p[i] == '.') return false;
    if (seg == 2 && p[i] == '.' && p[i + 1] == '.') return false;
    for (std::size_t k = i; k < j; ++k) {
      if (p[k] == '\0') return false;
    }
    i = j + 1;
  }
  return true;
}

const char* PathClassName(PathClass c) {
  switch (c) {
    case PathClass::kWorkspace: return "workspace";
    case PathClass::kReadOnly: return "read-only";
    case PathClass::kReadWrite: return "read-write";
    case PathClass::kDenied: return "denied";
    case PathClass::kOutside: return "outside";
    case PathClass::kMalformed: return "malformed";
    case PathClass::kHeldFd: return "held descriptor";
  }
  return "?";
}

}  // namespace cordon::policy
