// RealPath and RealPathOfMissing (normalise.h) for many paths that share
// prefixes, as a launch canonicalises them: the credential deny list and
// the tool roots under one HOME. realpath(3) reads every component of every
// path again (glibc calls readlink on each), so twenty names under
// ~/.config cost a hundred syscalls; here each prefix is resolved once and
// each further component costs one lstat (a symlink is handed to realpath).
//
// The answers are realpath's, errors included (the first prefix that
// fails says why): a path that is not absolute and normal ("//", "/./",
// "/../", a trailing '/') goes to realpath whole. Remembered for the
// resolver's life, so it is made for one step of the load in which
// nothing it resolves is created, renamed or removed. Not thread-safe.
#pragma once

#include <string>
#include <unordered_map>

#include "base/result.h"

namespace cordon::supervisor {

class PathResolver {
 public:
  // As RealPath.
  Result<std::string> Real(const std::string& path);
  // As RealPathOrEmpty.
  std::string RealOrEmpty(const std::string& path, int* err = nullptr);
  // As RealPathOfMissing.
  Result<std::string> RealOfMissing(const std::string& path);

 private:
  struct Answer {
    std::string real;  // when err == 0
    int err = 0;
  };
  const Answer& Resolve(const std::string& path);
  std::unordered_map<std::string, Answer> memo_;
};

}  // namespace cordon::supervisor
