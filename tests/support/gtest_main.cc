#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Sandboxing is per process and forever: death tests fork+exec a fresh
  // copy so no restriction leaks between tests.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // Scratch trees live in one directory per run, removed at the end: a
  // death test's child builds its fixture's tree and _exits without
  // removing it (test_env.h). The child inherits the variable.
  std::string dir;
  if (std::getenv("CORDON_TEST_TMPDIR") == nullptr) {
    dir = "/tmp/cordon-tests-" + std::to_string(::getpid());
    if (::mkdir(dir.c_str(), 0755) == 0) ::setenv("CORDON_TEST_TMPDIR", dir.c_str(), 1);
    else dir.clear();
  }
  // The user's settings file is the policy of every run without --policy
  // (tools/settings_file.h): a developer's `cordon sandbox disable` must
  // not change what the tests see. Tests that want one set their own.
  if (const char* base = std::getenv("CORDON_TEST_TMPDIR"); base != nullptr) {
    ::setenv("XDG_CONFIG_HOME", (std::string(base) + "/no-xdg-config").c_str(), 1);
    // Nor may a run's record, audit log, journal or private cache land in the developer's
    // state home, or at the top of the root mount (/.cordon-journal-UID)
    // when a test runs with HOME=/nonexistent: the run's directory holds
    // them. Tests of the other journal places set their own.
    const std::string state = std::string(base) + "/state";
    if (::mkdir(state.c_str(), 0700) == 0 || errno == EEXIST) {
      ::setenv("XDG_STATE_HOME", state.c_str(), 1);
    }
  }
  int rc = RUN_ALL_TESTS();
  if (!dir.empty() && std::system(("chmod -R u+rwx '" + dir + "'; rm -rf '" + dir + "'").c_str())) {
  }
  return rc;
}
