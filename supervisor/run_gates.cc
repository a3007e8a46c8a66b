#include "supervisor/run_gates.h"

#include <utility>

namespace cordon::supervisor {
namespace {

// Everything asked of `inner`; execs told to `seen` too.
class SeeingExecs final : public RunGates {
 public:
  SeeingExecs(std::shared_ptr<RunGates> inner, std::function<void(pid_t, const std::string&)> seen)
      : inner_(std::move(inner)), seen_(std::move(seen)) {}

  bool CanAsk(Ask what) const override { return inner_->CanAsk(what); }
  Status AskDelete(const Request& req, const policy::DeletePreview& preview,
                   const std::function<bool()>& still_valid) override {
    return inner_->AskDelete(req, preview, still_valid);
  }
  Status AskWrite(const Request& req, const policy::DeletePreview& preview,
                  const std::function<bool()>& still_valid) override {
    return inner_->AskWrite(req, preview, still_valid);
  }
  Status AskBypass(const Request& req, const policy::DeletePreview& preview,
                   const std::function<bool()>& still_valid) override {
    return inner_->AskBypass(req, preview, still_valid);
  }
  Status AdmitExec() override { return inner_->AdmitExec(); }
  bool SeesExecs() const override { return true; }
  void ExecSeen(pid_t pid, const std::string& path) override {
    if (inner_->SeesExecs()) inner_->ExecSeen(pid, path);
    seen_(pid, path);
  }
  void Shutdown() override { inner_->Shutdown(); }

 private:
  std::shared_ptr<RunGates> inner_;
  std::function<void(pid_t, const std::string&)> seen_;
};

}  // namespace

std::shared_ptr<RunGates> AlsoSeeingExecs(std::shared_ptr<RunGates> inner,
                                          std::function<void(pid_t, const std::string&)> seen) {
  if (!inner) inner = std::make_shared<DenyGates>();
  return std::make_shared<SeeingExecs>(std::move(inner), std::move(seen));
}

}  // namespace cordon::supervisor
