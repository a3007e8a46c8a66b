// The policy file: JSON (nlohmann-json), documented in docs/policy.md. The
// parser checks everything and reports every problem, each with its JSON
// pointer (and line and column for a syntax error): unknown keys, wrong
// types, relative or ".."-bearing paths, contradictions. A policy with any
// error grants nothing. Paths are kept as written (lexically normal);
// NormalisePolicy (normalise.h) resolves them afterwards.
//
// Each top-level section has its own function in policy_parser.cc, listed
// in one table; a new section (tools, approvals) is one entry there.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.h"

namespace cordon::policy {

struct PolicyError {
  std::string pointer;  // RFC 6901 JSON pointer ("" for the document)
  std::string message;
  int line = 0;  // 1-based, for syntax errors only (0: unknown)
  int column = 0;
};

// "FILE:LINE:COL: message" or "FILE: /json/pointer: message".
std::string FormatPolicyError(const std::string& file, const PolicyError& e);

// The profile a `security.assistantPermissions.profile` value selects.
inline constexpr std::string_view kWorkspaceManagedV1 = "workspace-managed/v1";

// Parses `text` onto `out` (which holds the defaults, and may already hold a
// workspace). Returns every error; on errors `out` must not be used.
std::vector<PolicyError> ParsePolicy(std::string_view text, Policy& out);

}  // namespace cordon::policy
