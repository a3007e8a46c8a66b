// The keys of a git configuration that make git run a program, or read a
// configuration from elsewhere, when the user's own git later works in the
// repository outside the sandbox (issue 27 item 7): core.fsmonitor,
// core.hooksPath, core.sshCommand, core.pager, include.path, a filter's
// clean/smudge/process, ... A repository the run itself creates keeps its
// config writable by git (lock file, then rename), but the supervisor
// reads what is renamed into place and refuses content that sets one.
//
// The parser follows git's config syntax (config.c): sections `[name]`,
// `[name "subsection"]` and `[name.sub]`, keys case-insensitive, values
// with quotes, escapes and backslash-newline continuations, `#`/`;`
// comments. Where it cannot tell, it reports, so it fails closed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cordon::policy {

// Every key of `content` that runs a program or redirects git's
// configuration, as "section.key" or "section.subsection.key" (section and
// key lower-cased); an unparsable line is reported as "(unparsable line N)".
// Empty when git may use the file as it is. Pure; bounded by the content.
std::vector<std::string> RunnableGitConfigKeys(std::string_view content);

// A config the user had before the run (a pre-existing repository's
// .git/config) may be replaced by git only with the same entries, in the
// same order, but for a submodule's registration (submodule.NAME.url,
// .active, an .update that is no command: `git submodule init`) and
// user.name/user.email. The keys that differ otherwise, as above; empty
// when `after` may take `before`'s place. Pure; bounded by the contents.
std::vector<std::string> ChangedBeyondRegistration(std::string_view before, std::string_view after);

// The value git takes for `name` ("section.key", lower-case, no
// subsection) in `content`: the last one set, as git reads it; empty when
// it is not set. Pure; bounded by the content. (An include.path is not
// followed: what an included file sets is not seen.)
std::string GitConfigValue(std::string_view content, std::string_view name);

}  // namespace cordon::policy
