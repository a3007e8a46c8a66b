// libFuzzer target for policy::DecideAt: random rule sets, a random path and
// random facts. Checks the invariants the supervisor relies on, not just "no
// crash":
//  - nothing is allowed (or sent to an approver) at a path whose covering
//    rule (the one rule lookup) is not read-write, or that no rule covers;
//  - nothing is allowed at a path with a raw ".." segment;
//  - a refusal carries an errno and a reason.
// Input: byte 0 = rule count (mod 8); then per rule one byte (access in the
// low two bits, path index in the rest); then 8 bytes of facts; the rest is
// the path.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "policy/decide.h"
#include "policy/rule_lookup.h"

using namespace cordon::policy;

namespace {

const char* const kPaths[] = {"/",      "/w",       "/w/a",   "/w/a/b", "/w/ab",
                              "/w/a/.git", "/t",    "/w/a/b/c"};

bool HasDotDot(std::string_view p) {
  std::size_t i = 0;
  while (i <= p.size()) {
    std::size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    if (p.substr(i, j - i) == "..") return true;
    i = j + 1;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::size_t n = data[0] % 8;
  std::size_t at = 1;
  if (size < at + n + 8) return 0;
  std::vector<PathRule> rules;
  for (std::size_t i = 0; i < n; ++i, ++at) {
    Access a = static_cast<Access>((data[at] & 3) % 3);
    rules.push_back({kPaths[(data[at] >> 2) % 8], a, true, "fuzz"});
  }
  const uint8_t* f = data + at;
  at += 8;
  FileRequest q;
  q.op = static_cast<FileOp>(f[0] % 8);
  q.entry.kind = static_cast<EntryKind>(f[1] % 8);
  q.other.kind = static_cast<EntryKind>((f[1] >> 3) % 8);
  q.entry.nlink = 1 + (f[2] & 3);
  q.entry.pinned = f[2] & 4;
  q.entry.born_in_run = f[2] & 8;
  q.entry.own = f[2] & 16;
  q.other.pinned = f[2] & 32;
  q.other.born_in_run = f[2] & 64;
  q.other.own = f[2] & 128;
  q.place = {bool(f[3] & 1), bool(f[3] & 2), bool(f[3] & 4), bool(f[3] & 8), bool(f[3] & 16)};
  q.other_place = {bool(f[4] & 1), bool(f[4] & 2), bool(f[4] & 4), bool(f[4] & 8),
                   bool(f[4] & 16)};
  q.same_root = f[5] & 1;
  q.want_dir = f[5] & 2;
  q.tmpfile = f[5] & 4;
  q.created = f[5] & 8;
  q.nofollow = f[5] & 16;
  q.tool_sees_name = f[5] & 32;
  q.create = static_cast<EntryKind>(f[6] % 8);
  Settings s{bool(f[7] & 1), bool(f[7] & 2)};
  std::string_view path(reinterpret_cast<const char*>(data + at), size - at);

  Decision d = DecideAt(rules, path, q, s);
  if (d.verdict == Verdict::kRefuse) {
    if (d.err == 0 || d.rule == nullptr || d.rule[0] == '\0') std::abort();
    return 0;
  }
  // Allowed or asked: the path must be normal, covered and read-write (a
  // read: covered by any rule but a denial).
  if (path.empty() || path[0] != '/' || HasDotDot(path)) std::abort();
  const bool read = q.op == FileOp::kRead;
  Covered c = CoverPath(rules, path, read);
  if (c.err != 0 || c.rule == nullptr) std::abort();
  const PathRule* r = CoveringRule(rules, c.path);
  if (r == nullptr || r->access == Access::kDenied) std::abort();
  if (!read && (c.rule->access != Access::kReadWrite || r->access != Access::kReadWrite)) std::abort();
  return 0;
}
