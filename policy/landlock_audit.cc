#include "policy/landlock_audit.h"

#include <algorithm>
#include <charconv>

namespace cordon::policy {
namespace {

constexpr size_t kMaxSerials = 256;
constexpr size_t kMaxForeign = 4096;

// Fields the kernel writes with audit_log_untrustedstring: quoted when
// they can be, else hex.
bool UntrustedString(std::string_view key) {
  return key == "path" || key == "exe" || key == "comm" || key == "ocomm" || key == "name" ||
         key == "proctitle" || key == "cmd";
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The kernel's hex for a string it could not quote; nullopt when `v` is
// not hex.
std::optional<std::string> FromHex(std::string_view v) {
  if (v.empty() || v.size() % 2 != 0) return std::nullopt;
  std::string out;
  out.reserve(v.size() / 2);
  for (size_t i = 0; i < v.size(); i += 2) {
    const int hi = HexDigit(v[i]), lo = HexDigit(v[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi << 4 | lo));
  }
  return out;
}

template <typename T>
bool Number(std::string_view s, T& out) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end;
}

}  // namespace

const std::string* AuditText::Find(std::string_view key) const {
  for (const auto& [k, v] : fields) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::optional<AuditText> ParseAuditText(std::string_view s) {
  while (!s.empty() && (s.back() == '\0' || s.back() == '\n')) s.remove_suffix(1);
  constexpr std::string_view kOpen = "audit(";
  if (s.substr(0, kOpen.size()) != kOpen) return std::nullopt;
  const size_t close = s.find("):");
  if (close == std::string_view::npos) return std::nullopt;
  const std::string_view stamp = s.substr(kOpen.size(), close - kOpen.size());
  const size_t colon = stamp.rfind(':');
  AuditText t;
  if (colon == std::string_view::npos || !Number(stamp.substr(colon + 1), t.serial)) {
    return std::nullopt;
  }
  size_t i = close + 2;
  while (i < s.size()) {
    if (s[i] == ' ') {
      ++i;
      continue;
    }
    const size_t eq = s.find('=', i);
    if (eq == std::string_view::npos || eq == i) return std::nullopt;
    const std::string_view key = s.substr(i, eq - i);
    if (key.find(' ') != std::string_view::npos) return std::nullopt;
    i = eq + 1;
    std::string value;
    if (i < s.size() && (s[i] == '"' || s[i] == '\'')) {
      const size_t end = s.find(s[i], i + 1);
      if (end == std::string_view::npos) return std::nullopt;
      value = std::string(s.substr(i + 1, end - i - 1));
      i = end + 1;
    } else {
      const size_t end = std::min(s.find(' ', i), s.size());
      const std::string_view raw = s.substr(i, end - i);
      std::optional<std::string> decoded;
      if (UntrustedString(key)) decoded = FromHex(raw);
      value = decoded ? std::move(*decoded) : std::string(raw);
      i = end;
    }
    t.fields.emplace_back(std::string(key), std::move(value));
  }
  return t;
}

void LandlockRecords::SetCreator(int64_t pid) {
  creator_ = pid;
  Prune();
}

bool LandlockRecords::Foreign(const std::string& domain) const {
  if (foreign_.count(domain) != 0) return true;
  auto c = creators_.find(domain);
  return creator_ != 0 && c != creators_.end() && c->second != creator_;
}

void LandlockRecords::Prune() {
  if (creator_ == 0) return;
  for (auto it = creators_.begin(); it != creators_.end();) {
    if (it->second == creator_) {
      ++it;
      continue;
    }
    if (foreign_.size() >= kMaxForeign) foreign_.clear();
    foreign_.insert(it->first);
    held_.erase(it->first);
    freed_.erase(it->first);
    it = creators_.erase(it);
  }
}

void LandlockRecords::Feed(uint16_t type, std::string_view payload) {
  if (type != kAuditLandlockAccess && type != kAuditLandlockDomain && type != kAuditSyscall &&
      type != kAuditUser) {
    return;
  }
  std::optional<AuditText> t = ParseAuditText(payload);
  if (!t) return;
  switch (type) {
    case kAuditLandlockAccess:
      Access(*t);
      break;
    case kAuditLandlockDomain:
      DomainStatus(*t);
      break;
    case kAuditSyscall:
      Syscall(*t);
      break;
    case kAuditUser:
      if (const std::string* msg = t->Find("msg"); msg != nullptr && markers_.size() < 16) {
        markers_.insert(*msg);
      }
      break;
  }
}

void LandlockRecords::Access(const AuditText& t) {
  const std::string* domain = t.Find("domain");
  const std::string* blockers = t.Find("blockers");
  if (domain == nullptr || blockers == nullptr || Foreign(*domain)) return;
  auto it = held_.find(*domain);
  if (it == held_.end()) {
    if (held_.size() >= kMaxDomains) return;
    it = held_.emplace(*domain, Domain{}).first;
  }
  Domain& d = it->second;
  if (d.denials.size() >= max_) {
    ++d.dropped;
    return;
  }
  LandlockDenial denial;
  denial.serial = t.serial;
  denial.blockers = *blockers;
  for (const auto& [k, v] : t.fields) {
    if (k != "domain" && k != "blockers") denial.object.emplace_back(k, v);
  }
  d.denials.push_back(std::move(denial));
  by_serial_[t.serial] = {*domain, d.denials.size() - 1};
  if (by_serial_.size() > kMaxSerials) by_serial_.erase(by_serial_.begin());
}

void LandlockRecords::DomainStatus(const AuditText& t) {
  const std::string* domain = t.Find("domain");
  const std::string* status = t.Find("status");
  if (domain == nullptr || status == nullptr || Foreign(*domain)) return;
  if (*status == "allocated") {
    int64_t pid = 0;
    const std::string* p = t.Find("pid");
    if (p == nullptr || !Number(*p, pid)) return;
    if (creators_.size() >= kMaxDomains && creators_.count(*domain) == 0) return;
    creators_[*domain] = pid;
    Prune();
  } else if (*status == "deallocated") {
    uint64_t n = 0;
    const std::string* count = t.Find("denials");
    if (count != nullptr && Number(*count, n) && creators_.count(*domain) != 0) freed_[*domain] = n;
  }
}

void LandlockRecords::Syscall(const AuditText& t) {
  auto s = by_serial_.find(t.serial);
  if (s == by_serial_.end()) return;
  auto d = held_.find(s->second.first);
  if (d == held_.end()) return;
  // Every denial of that event (one per blocked object) ends at the index kept.
  std::vector<LandlockDenial>& list = d->second.denials;
  for (size_t i = std::min(s->second.second + 1, list.size());
       i-- > 0 && list[i].serial == t.serial;) {
    LandlockDenial& x = list[i];
    if (const std::string* v = t.Find("pid")) Number(*v, x.pid);
    if (const std::string* v = t.Find("comm")) x.comm = *v;
    if (const std::string* v = t.Find("exe")) x.exe = *v;
    if (const std::string* v = t.Find("syscall")) x.syscall = *v;
  }
}

bool LandlockRecords::SawMarker(std::string_view marker) const {
  return markers_.count(std::string(marker)) != 0;
}

bool LandlockRecords::Deallocated() const {
  if (creator_ == 0) return false;
  for (const auto& [domain, pid] : creators_) {
    if (pid == creator_ && freed_.count(domain) == 0) return false;
  }
  return true;
}

LandlockAccount LandlockRecords::Account() const {
  LandlockAccount a;
  if (creator_ == 0) return a;
  const std::string* ours = nullptr;
  for (const auto& [domain, pid] : creators_) {
    if (pid != creator_) continue;
    if (ours != nullptr) {
      a.ambiguous = true;
      return a;
    }
    ours = &domain;
  }
  if (ours == nullptr) return a;
  if (auto d = held_.find(*ours); d != held_.end()) {
    a.denials = d->second.denials;
    a.dropped = d->second.dropped;
  }
  if (auto f = freed_.find(*ours); f != freed_.end()) a.kernel_denials = f->second;
  return a;
}

std::string LandlockMarker(std::string_view run_id) {
  return "cordon: end of the Landlock records of run " + std::string(run_id);
}

}  // namespace cordon::policy
