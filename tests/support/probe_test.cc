#include "tests/support/probe_test.h"

namespace cordon::testing {

int ProbeTest::Probe(const std::string& profile, const std::vector<std::string>& op,
                     const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--log-level", "info", "run", "--workspace", t_.ws(),
                                    "--ro", ProbeDir()};
  if (!profile.empty()) args.insert(args.end(), {"--profile", profile});
  args.insert(args.end(), extra.begin(), extra.end());
  if (notify_all()) args.push_back("--test-force-notify-all");
  args.push_back("--");
  args.push_back(std::get<0>(GetParam()));
  args.insert(args.end(), op.begin(), op.end());
  last_ = RunCordon(args, "", {}, launcher_);
  return last_.status;
}

::testing::internal::ParamGenerator<ProbeTest::ParamType> ProbeParams() {
  return ::testing::Combine(::testing::Values(PROBE_DYNAMIC, PROBE_STATIC), ::testing::Bool());
}

std::string ProbeParamName(const ::testing::TestParamInfo<ProbeTest::ParamType>& info) {
  std::string probe = std::get<0>(info.param);
  return std::string(probe.find("static") != std::string::npos ? "static" : "dynamic") +
         (std::get<1>(info.param) ? "_notify_all" : "_landlock");
}

}  // namespace cordon::testing
