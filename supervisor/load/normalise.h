// Normalisation, the step between a policy as written and as enforced
// (seed 004: "realpath existing paths"): every path becomes the realpath of
// what exists now, missing paths are dropped and listed, and the workspace's
// protected paths are found. Runs once, before anything is started.
#pragma once

#include <string>

#include "policy/policy.h"
#include "base/result.h"

namespace cordon::supervisor {

// realpath(3) of an existing path; the error names the path.
Result<std::string> RealPath(const std::string& path);

// RealPath, empty when it fails (*err, when given, says why).
std::string RealPathOrEmpty(const std::string& path, int* err = nullptr);

// The caller's HOME by its canonical name, as the base policy's rules name
// what lies under it; empty when HOME is empty, relative or gone.
std::string CanonicalHome(const std::string& home);

// The canonical name a path that does not exist yet would have: the realpath
// of its deepest existing ancestor, then the rest as written (`path`
// absolute and normal). Errors other than ENOENT are kept.
Result<std::string> RealPathOfMissing(const std::string& path);

// The workspace: realpath of an existing directory that is not "/".
Result<std::string> ResolveWorkspace(const std::string& path);

// Replaces each rule's path by its realpath; a rule whose path does not
// exist moves to p.dropped with the reason. Then, when p.workspace is set,
// fills p.protected_paths from p.protected_patterns (a bounded walk; a cut
// short walk adds a note).
void NormalisePolicy(policy::Policy& p);

}  // namespace cordon::supervisor
