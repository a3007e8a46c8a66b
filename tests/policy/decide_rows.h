// The row builder of policy::Decide's table tests (decide_test.cc,
// decide_kinds_test.cc): a request built by chained facts, and a row that
// names the rule it is about and what Decide must answer.
#pragma once

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "policy/decide.h"

namespace cordon::policy::decide_rows {

using K = EntryKind;

// A request, built by chained facts.
// clang-format off: one fact a line reads as a table.
struct R {
  FileRequest q;
  Settings s;
  explicit R(FileOp op, K entry = K::kRegular) {
    q.op = op;
    q.entry.kind = entry;
    q.other.kind = K::kAbsent;
  }
  R& root() {
    q.place.root = true;
    return *this;
  }
  R& shared() {
    q.place.shared = true;
    return *this;
  }
  R& file_grant() {
    q.place.file_grant = true;
    return *this;
  }
  R& cache() {
    q.place.disposable = true;
    return *this;
  }
  R& ocache() {
    q.other_place.disposable = true;
    return *this;
  }
  R& prot() {
    q.place.protected_path = true;
    return *this;
  }
  R& lead() {
    q.place.leads_to_protected = true;
    return *this;
  }
  R& lead_any() {
    q.place.leads_to_protected_any_depth = true;
    return *this;
  }
  R& nlink(unsigned n) {
    q.entry.nlink = n;
    return *this;
  }
  R& pinned() {
    q.entry.pinned = true;
    return *this;
  }
  R& unlisted() {
    q.entry.holds_unlisted = true;
    return *this;
  }
  R& born() {
    q.entry.born_in_run = true;
    return *this;
  }
  R& notown() {
    q.entry.own = false;
    return *this;
  }
  R& full() {
    q.entry.has_entries = true;
    return *this;
  }
  R& ofull() {
    q.other.has_entries = true;
    return *this;
  }
  R& to(K kind) {
    q.other.kind = kind;
    return *this;
  }
  R& oroot() {
    q.other_place.root = true;
    return *this;
  }
  R& oshared() {
    q.other_place.shared = true;
    return *this;
  }
  R& oprot() {
    q.other_place.protected_path = true;
    return *this;
  }
  R& olead() {
    q.other_place.leads_to_protected = true;
    return *this;
  }
  R& olead_any() {
    q.other_place.leads_to_protected_any_depth = true;
    return *this;
  }
  R& guarded() {
    q.place.guarded_config = true;
    return *this;
  }
  R& oguarded() {
    q.other_place.guarded_config = true;
    return *this;
  }
  // A pre-existing repository's .git/config, as the supervisor's facts say it.
  R& users_cfg() {
    q.place.guarded_config = q.place.users_config = q.place.protected_path = true;
    return *this;
  }
  R& ousers_cfg() {
    q.other_place.guarded_config = q.other_place.users_config = true;
    q.other_place.protected_path = true;
    return *this;
  }
  // A new worktree's commondir, as the supervisor's facts say it (protected
  // too).
  R& new_wt() {
    q.place.new_worktree_link = q.place.protected_path = true;
    return *this;
  }
  R& onew_wt() {
    q.other_place.new_worktree_link = q.other_place.protected_path = true;
    return *this;
  }
  // A gitfile or an older worktree's commondir, as the supervisor's facts
  // say it (protected too).
  R& removable() {
    q.place.removable_link = q.place.protected_path = true;
    return *this;
  }
  R& git_entry() {
    q.place.git_entry = true;
    return *this;
  }
  R& ogit_entry() {
    q.other_place.git_entry = true;
    return *this;
  }
  R& content(ContentFact f) {
    q.source_content = f;
    return *this;
  }
  R& glob() {
    q.place.deny_glob = true;
    return *this;
  }
  R& oglob() {
    q.other_place.deny_glob = true;
    return *this;
  }
  R& glob_parents() {
    q.place.deny_glob_parents = q.other_place.deny_glob_parents = true;
    return *this;
  }
  R& opinned() {
    q.other.pinned = true;
    return *this;
  }
  R& oborn() {
    q.other.born_in_run = true;
    return *this;
  }
  R& onotown() {
    q.other.own = false;
    return *this;
  }
  R& cross() {
    q.same_root = false;
    return *this;
  }
  R& want_dir() {
    q.want_dir = true;
    return *this;
  }
  R& tmpfile() {
    q.tmpfile = true;
    return *this;
  }
  R& created() {
    q.created = true;
    return *this;
  }
  R& nofollow() {
    q.nofollow = true;
    return *this;
  }
  R& make(K kind) {
    q.create = kind;
    return *this;
  }
  R& sees() {
    q.tool_sees_name = true;
    return *this;
  }
  R& allow_delete() {
    s.delete_allowed = true;
    return *this;
  }
  R& can_ask() {
    s.can_ask = true;
    return *this;
  }
  // sensitive.delete: recoverable, in the workspace the journal covers.
  R& kept() {
    s.recoverable = true;
    q.place.journaled = q.other_place.journaled = true;
    return *this;
  }
  R& trunc() {
    q.truncate = true;
    return *this;
  }
};
// clang-format on

struct Row {
  const char* rule;  // the rule the row is about
  R req;
  Verdict verdict;
  int err;
};

inline Row Allow(const char* rule, R r) { return {rule, r, Verdict::kAllow, 0}; }
inline Row Refuse(const char* rule, R r, int err) { return {rule, r, Verdict::kRefuse, err}; }
inline Row Ask(const char* rule, R r) { return {rule, r, Verdict::kAsk, 0}; }

inline constexpr FileOp kOpen = FileOp::kOpenWrite, kCreate = FileOp::kCreate,
                        kDel = FileOp::kDelete, kRen = FileOp::kRename, kEx = FileOp::kExchange,
                        kLink = FileOp::kLink, kMeta = FileOp::kMetadata, kRead = FileOp::kRead;

inline std::string Describe(const Decision& d) {
  const char* v = d.verdict == Verdict::kAllow ? "allow"
                  : d.verdict == Verdict::kAsk ? "ask"
                                               : "refuse";
  return std::string(v) + " errno " + std::to_string(d.err) + " (" + d.rule + ")";
}

// Each row's request decided: the verdict, a refusal's errno, and a rule
// named.
inline void ExpectRows(const std::vector<Row>& rows) {
  for (const Row& row : rows) {
    Decision d = Decide(row.req.q, row.req.s);
    EXPECT_EQ(d.verdict, row.verdict) << row.rule << ": got " << Describe(d);
    if (row.verdict == Verdict::kRefuse) {
      EXPECT_EQ(d.err, row.err) << row.rule << ": " << Describe(d);
    }
    EXPECT_NE(std::string(d.rule), "") << row.rule;
  }
}

}  // namespace cordon::policy::decide_rows
