// libFuzzer target for Landlock's audit records (issue 27 item 5): any
// bytes as a stream of records (one a line, its first byte choosing the
// type). Beyond "no crash": nothing is attached before the run's creator is
// known; an account is never both ambiguous and holding denials; it keeps
// no more than its bound; every parsed field has a non-empty key without a
// space or '='.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "policy/landlock_audit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cordon::policy;
  constexpr uint16_t kTypes[] = {kAuditLandlockAccess, kAuditLandlockDomain, kAuditSyscall,
                                 kAuditUser};
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  LandlockRecords r(8);
  size_t line = 0;
  for (size_t i = 0; i < text.size();) {
    size_t end = text.find('\n', i);
    if (end == std::string_view::npos) end = text.size();
    std::string_view rec = text.substr(i, end - i);
    i = end + 1;
    if (rec.empty()) continue;
    const uint16_t type = kTypes[static_cast<unsigned char>(rec[0]) % 4];
    rec.remove_prefix(1);
    if (auto t = ParseAuditText(rec)) {
      for (const auto& [k, v] : t->fields) {
        if (k.empty() || k.find_first_of(" =") != std::string::npos) std::abort();
      }
    }
    r.Feed(type, rec);
    if (++line == 3) r.SetCreator(500);  // late, as a real run may name it
    if (line < 3 && !r.Account().denials.empty()) std::abort();
  }
  LandlockAccount a = r.Account();
  if (a.ambiguous && !a.denials.empty()) std::abort();
  if (a.denials.size() > 8) std::abort();
  return 0;
}
