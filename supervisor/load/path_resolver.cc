#include "supervisor/load/path_resolver.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <string_view>

namespace cordon::supervisor {
namespace {

// Absolute, no empty, "." or ".." component, no trailing '/': resolvable
// a component at a time.
bool Normal(std::string_view p) {
  if (p.empty() || p[0] != '/') return false;
  if (p == "/") return true;
  if (p.back() == '/') return false;
  std::size_t start = 1;
  while (true) {
    const std::size_t slash = p.find('/', start);
    const std::string_view c =
        p.substr(start, slash == std::string_view::npos ? slash : slash - start);
    if (c.empty() || c == "." || c == "..") return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

}  // namespace

const PathResolver::Answer& PathResolver::Resolve(const std::string& path) {
  if (auto it = memo_.find(path); it != memo_.end()) return it->second;
  Answer a;
  const std::size_t slash = path.rfind('/');
  if (!Normal(path) || path.size() >= PATH_MAX) {
    char buf[PATH_MAX];
    if (::realpath(path.c_str(), buf) != nullptr)
      a.real = buf;
    else
      a.err = errno;
  } else if (path == "/") {
    a.real = "/";
  } else {
    // The parent's answer, then this component: realpath fails at the first
    // prefix that fails, with that prefix's error.
    const Answer& parent = Resolve(slash == 0 ? std::string("/") : path.substr(0, slash));
    if (parent.err != 0) {
      a.err = parent.err;
    } else {
      std::string candidate =
          (parent.real == "/" ? std::string() : parent.real) + path.substr(slash);
      struct stat st;
      char buf[PATH_MAX];
      if (::lstat(candidate.c_str(), &st) != 0) {
        a.err = errno;
      } else if (!S_ISLNK(st.st_mode)) {
        a.real = std::move(candidate);
      } else if (::realpath(candidate.c_str(), buf) != nullptr) {
        a.real = buf;  // a link: realpath follows it (and finds a loop)
      } else {
        a.err = errno;
      }
    }
  }
  return memo_.emplace(path, std::move(a)).first->second;
}

Result<std::string> PathResolver::Real(const std::string& path) {
  const Answer& a = Resolve(path);
  if (a.err != 0) return SysError{a.err, "realpath", path};
  return a.real;
}

std::string PathResolver::RealOrEmpty(const std::string& path, int* err) {
  const Answer& a = Resolve(path);
  if (a.err != 0 && err != nullptr) *err = a.err;
  return a.err != 0 ? std::string() : a.real;
}

Result<std::string> PathResolver::RealOfMissing(const std::string& path) {
  if (path.empty() || path[0] != '/') return SysError{EINVAL, "not an absolute path", path};
  std::string rest;
  std::string cur = path;
  while (cur.size() > 1) {
    const std::size_t slash = cur.rfind('/');
    rest = cur.substr(slash) + rest;
    cur = slash == 0 ? "/" : cur.substr(0, slash);
    const Answer& a = Resolve(cur);
    if (a.err == 0) return (a.real == "/" ? "" : a.real) + rest;
    if (a.err != ENOENT) return SysError{a.err, "realpath", cur};
  }
  return SysError{ENOENT, "realpath", path};
}

}  // namespace cordon::supervisor
