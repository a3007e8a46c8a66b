// ProbeTest: a suite run once per probe (dynamic and static: a static
// binary skips the preload, the kernel layers must hold all the same) and
// per rung (Landlock + notify, and notify-all: no Landlock, the supervisor
// decides reads too). Probe() runs the probe under the real cordon binary;
// its exit status is the errno the operation got.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "tests/support/test_env.h"

namespace cordon::testing {

class ProbeTest : public ::testing::TestWithParam<std::tuple<const char*, bool>> {
 protected:
  // cordon --log-level info run --workspace WS --ro PROBEDIR [--profile P]
  //   EXTRA... [--test-force-notify-all] -- PROBE OP...; returns the status.
  int Probe(const std::string& profile, const std::vector<std::string>& op,
            const std::vector<std::string>& extra = {});
  bool notify_all() const { return std::get<1>(GetParam()); }

  ScratchTree t_;
  RunResult last_;
  std::string launcher_;  // RunCordon's launcher: empty, or CONTAINER_LAUNCHER
};

// The four parameter combinations and their names ("static_notify_all").
::testing::internal::ParamGenerator<ProbeTest::ParamType> ProbeParams();
std::string ProbeParamName(const ::testing::TestParamInfo<ProbeTest::ParamType>& info);

}  // namespace cordon::testing
