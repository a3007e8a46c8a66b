// The tool's working directory, cached for the admission of relative paths:
// getcwd(2) costs ~2 µs on these VMs, once per relative open otherwise (rg
// opens every file of a search by a relative path). The library's chdir and
// fchdir hooks invalidate it. A chdir the library does not see (a raw
// syscall, or libc calling itself) can leave it stale; a stale base can only
// admit what the kernel then decides alone, never refuse: AdmitRelative
// judges a refusal again on a fresh getcwd.
// Async-signal-safe, fork- and vfork-safe: a sequence count over one
// buffer, no locks and no waiting (a reader that meets a writer calls
// getcwd itself).
#pragma once

namespace cordon::preload {

// The cwd in `buf` (policy::kAdmissionMaxPath bytes), or null when unknown.
// `*cached`: it came from the cache. errno is left as it was.
const char* Cwd(char* buf, bool* cached);

// getcwd(2) into `buf`, refilling the cache; null when unknown.
const char* FreshCwd(char* buf);

// The cwd changed (or may have): the next Cwd() asks the kernel.
void InvalidateCwd();

// In a fork child: a fill the parent's other threads had begun is dropped.
void ResetCwdAfterFork();

}  // namespace cordon::preload
