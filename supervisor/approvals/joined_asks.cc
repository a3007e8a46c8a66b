#include "supervisor/approvals/joined_asks.h"

namespace cordon::supervisor {

void JoinedAsks::SweepLocked(std::chrono::steady_clock::time_point now) {
  std::erase_if(questions_, [now](const auto& kv) {
    const Question& q = *kv.second;
    return q.inside == 0 && q.answered && (q.delivered || now - q.answered_at > kKeepUnclaimed);
  });
}

size_t JoinedAsks::size() {
  std::lock_guard<std::mutex> l(mu_);
  SweepLocked(std::chrono::steady_clock::now());
  return questions_.size();
}

JoinedAsks::Answer JoinedAsks::Ask(const std::string& op, const ApprovalRequest& req,
                                   std::chrono::milliseconds timeout,
                                   const std::function<bool()>& live) {
  // The digest covers the path, the identity (dev, ino, size, times) and
  // the content: a changed file is a new question.
  const std::string key = op + '\0' + std::to_string(req.preview.dev) + ':' +
                          std::to_string(req.preview.ino) + '\0' + req.preview_digest;
  Answer a;
  std::unique_lock<std::mutex> l(mu_);
  SweepLocked(std::chrono::steady_clock::now());
  std::shared_ptr<Question>& slot = questions_[key];
  // An answer already given to a live call settles that call only: the
  // next one is a new question.
  if (!slot || (slot->answered && slot->delivered)) slot = std::make_shared<Question>();
  std::shared_ptr<Question> q = slot;
  ++q->inside;
  const bool asker = !q->asked;
  if (asker) {
    q->asked = true;
    q->asked_id = req.request_id;
    l.unlock();
    Outcome o = approver_->Ask(req, timeout);
    l.lock();
    q->answered = true;
    q->outcome = o;
    q->answered_at = std::chrono::steady_clock::now();
    answered_.notify_all();
  } else {
    a.joined = true;
    const uint64_t asked_id = q->asked_id;
    l.unlock();
    approver_->Joined(req, asked_id);
    l.lock();
    // Until the answer, or until this call is gone too (interrupted
    // again: its restart joins as another call).
    while (!q->answered) {
      if (answered_.wait_for(l, kLivePoll) == std::cv_status::timeout && !q->answered && !live()) {
        a.outcome = Outcome::kStale;
        break;
      }
    }
  }
  if (q->answered) {
    a.outcome = q->outcome;
    if (live()) {
      if (q->outcome != Outcome::kAllowedOnce) {
        q->delivered = true;
      } else if (!q->delivered) {
        q->delivered = true;
        a.granted = true;
      } else {
        a.outcome = Outcome::kStale;  // another call took the grant
      }
    }
  }
  --q->inside;
  auto it = questions_.find(key);
  if (q->inside == 0 && q->delivered && it != questions_.end() && it->second == q) {
    questions_.erase(it);
  }
  return a;
}

}  // namespace cordon::supervisor
