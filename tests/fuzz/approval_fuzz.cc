// libFuzzer target for the approval protocol's messages (issue 27 item 1):
// any bytes as the JSON that comes over an approval socket (a run's request
// as the policy service reads it, its preview as `cordon approve` shows it,
// a hello). Beyond "no crash" (and no exception out of a parser):
//  - a request parses only when its digest is its preview's;
//  - a request or preview that parses, written out again, parses to the
//    same digest: what an approver answers is what the run asked;
//  - a bypass preview's operation, as a person reads it, can be written.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "policy/approval.h"
#include "policy/approval_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cordon::policy;
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;
  (void)CheckHello(j);
  if (auto r = ParseRequest(j)) {
    if (r->preview_digest != r->preview.Digest()) std::abort();
    auto again = ParseRequest(RequestMessage(*r, 1000));
    if (!again || again->request_id != r->request_id ||
        again->preview.Digest() != r->preview.Digest()) {
      std::abort();
    }
  }
  if (auto p = DeletePreview::FromJson(j)) {
    auto back = DeletePreview::FromJson(p->ToJson());
    if (!back || back->Digest() != p->Digest()) std::abort();
    if (!p->bypass.empty()) (void)BypassOperation(*p);
  }
  return 0;
}
