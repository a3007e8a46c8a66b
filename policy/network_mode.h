// The network mode as the command line and the policy file spell it
// (issue 25 item 1): none, public-web, hosts:LIST, allow. Pure.
#pragma once

#include <string>
#include <string_view>

#include "policy/policy.h"

namespace cordon::policy {

// Sets p->network (and p->web.hosts for hosts:LIST) from `text`; false
// with a one-line *error naming what is wrong (an unknown mode, a
// malformed list, an address in the list).
bool ParseNetworkMode(std::string_view text, Policy* p, std::string* error);

// The mode as ParseNetworkMode takes it: "hosts:github.com,*.npmjs.org".
std::string FormatNetworkMode(const Policy& p);

// One line for `policy explain`: the mode, what it lets the tool reach,
// and the hosts.
std::string DescribeNetwork(const Policy& p);

}  // namespace cordon::policy
