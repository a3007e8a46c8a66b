// libFuzzer target for policy/git_config_keys (issue 27 item 7): any bytes
// as a git config. Beyond "no crash": a config that sets core.fsmonitor on
// a line of its own, appended to whatever came before (after a newline and
// a fresh section header), is always reported, so no prefix can hide a
// runnable key from the check, nor from the comparison with the user's
// config (ChangedBeyondRegistration).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "policy/git_config_keys.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  (void)cordon::policy::RunnableGitConfigKeys(text);
  // A backslash at the very end continues into the next line, as git does:
  // the appended header then belongs to the value. End it first.
  std::string with = text + "\n\n[core]\n\tfsmonitor = x\n";
  if (cordon::policy::RunnableGitConfigKeys(with).empty()) std::abort();
  // A config compared with itself has no change; the runnable key appended
  // to the user's is one.
  if (!cordon::policy::ChangedBeyondRegistration(text, text).empty()) std::abort();
  if (cordon::policy::ChangedBeyondRegistration(text, with).empty()) std::abort();
  return 0;
}
