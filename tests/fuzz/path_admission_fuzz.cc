// libFuzzer target for policy/path_admission: any bytes as a path (and
// optionally a base), against a fixed table. Checks the invariants the
// preload and the supervisor rely on, not just "no crash":
//  - a ".." segment (any in an absolute path, one after a name in a relative
//    one) is admitted only for an absolute read that resolves into the
//    read-only set (never for a mutation, never near the workspace);
//  - a relative path joins its base as a simple model says: the base's
//    segments, one dropped per leading "..", then the rest's;
//  - NormalizePath output is absolute, normal and shorter than PATH_MAX;
//  - an admitted mutation lands in a read-write class; a refusal has an errno.
// Input: byte 0 = flags (bit 0: mutate, bit 1: the bytes up to the first
// '\n' are the base), then the path.
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "policy/path_admission.h"

using namespace cordon::policy;

namespace {

const AdmissionTable& Table() {
  static AdmissionTable* t = [] {
    auto* t = new AdmissionTable;
    t->SetWorkspace("/w/ws", Access::kReadWrite);
    t->Add("/usr", Access::kReadOnly);
    t->Add("/etc/shadow", Access::kDenied);
    t->Add("/etc", Access::kReadOnly);
    t->Add("/w/ws/ro", Access::kReadOnly);
    t->Add("/tmp/t", Access::kReadWrite);
    return t;
  }();
  return *t;
}

std::vector<std::string_view> Segments(std::string_view p) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view seg = p.substr(i, j - i);
    if (!seg.empty() && seg != ".") out.push_back(seg);
    i = j + 1;
  }
  return out;
}

// A ".." that follows a name: the alias the admission refuses.
bool HasParentAfterName(std::string_view p) {
  bool named = false;
  for (std::string_view seg : Segments(p)) {
    if (seg != "..")
      named = true;
    else if (named)
      return true;
  }
  return false;
}

// The ".." the admission refuses: every one in an absolute path, the ones
// after a name in a relative path (its leading ones climb the base).
bool RefusedParent(std::string_view p) {
  return !p.empty() && p[0] == '/' ? HasParentSegment(p) : HasParentAfterName(p);
}

// The join of a relative path to a normal base, written the plain way.
std::string ModelJoin(std::string_view base, std::string_view path) {
  std::vector<std::string_view> segs = Segments(base);
  for (std::string_view seg : Segments(path)) {
    if (seg == "..") {
      if (!segs.empty()) segs.pop_back();
    } else {
      segs.push_back(seg);
    }
  }
  std::string out;
  for (std::string_view seg : segs) (out += '/') += seg;
  return out.empty() ? "/" : out;
}

bool IsNormal(const char* s, long n) {
  if (n <= 0 || s[0] != '/' || static_cast<size_t>(n) >= kAdmissionMaxPath) return false;
  if (n > 1 && s[n - 1] == '/') return false;
  std::string_view v(s, static_cast<size_t>(n));
  if (v.find("//") != std::string_view::npos || v.find('\0') != std::string_view::npos) return false;
  return !HasParentSegment(v) && v.find("/./") == std::string_view::npos &&
         !(v.size() >= 2 && v.substr(v.size() - 2) == "/.");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  uint8_t flags = data[0];
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string base;
  const char* base_c = nullptr;
  if (flags & 2) {
    size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) return 0;
    base.assign(rest.substr(0, nl));
    base = base.substr(0, base.find('\0'));
    base_c = base.c_str();
    rest.remove_prefix(nl + 1);
  }
  AdmitOp op = (flags & 1) ? AdmitOp::kMutate : AdmitOp::kRead;
  Admission a = AdmitPath(Table(), op, rest, base_c);
  if (a.reason == nullptr) abort();
  if (a.verdict == AdmitVerdict::kAdmit) {
    // A raw ".." is admitted only for a read (left to the kernel, which
    // judges the physical path), never for a mutation.
    if (RefusedParent(rest) && (op != AdmitOp::kRead || a.cls != PathClass::kReadOnly)) abort();
    if (a.err != 0) abort();
    if (op == AdmitOp::kMutate && a.cls != PathClass::kWorkspace && a.cls != PathClass::kReadWrite)
      abort();
    if (a.cls == PathClass::kDenied || a.cls == PathClass::kOutside) abort();
  } else if (a.err == 0) {
    abort();
  }
  char out[kAdmissionMaxPath];
  long n = NormalizePath(rest, base_c, out);
  if (n >= 0 && (!IsNormal(out, n) || out[n] != '\0')) abort();
  if (n >= 0 && RefusedParent(rest)) abort();
  if (n == -EACCES && !RefusedParent(rest)) abort();
  if (n >= 0 && !rest.empty() && rest[0] != '/' && ModelJoin(base, rest) != std::string(out, n))
    abort();
  return 0;
}
