// A JSON document read strictly, for the policy and settings files: a
// syntax error names its line and column, and a key given twice in one
// object is an error at its JSON pointer (nlohmann keeps the last one
// silently, and a policy must not hide a setting that way). Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "policy/policy_parser.h"

namespace cordon::policy {

// `key` as one segment of an RFC 6901 JSON pointer ("~" -> "~0", "/" -> "~1").
std::string JsonPointerEscape(const std::string& key);

// Parses `text` into `doc`, adding every problem to `errors`. False when
// the text is no JSON document (`doc` unusable); a duplicate key is an
// error in a document still read whole, so its other problems are found.
bool ParseStrictJson(std::string_view text, nlohmann::json& doc, std::vector<PolicyError>& errors);

}  // namespace cordon::policy
