// Which variables leave the tool's environment (policy/env_scrub.h): one row
// per pattern, each with a name that only that pattern catches (the row
// names the pattern it expects, so removing or reordering a pattern fails
// it), the near misses that stay, cordon's own variables, and --env-keep.
#include "policy/env_scrub.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace cordon::policy {
namespace {

using ::testing::ElementsAre;

struct Row {
  const char* name;
  const char* pattern;  // the pattern it must match; null: none
  bool removed;         // with no --env-keep
};

constexpr Row kRows[] = {
    // One name for each pattern, caught by that pattern alone.
    {"GITHUB_TOKEN", "*_TOKEN", true},
    {"GH_CLIENT_SECRET", "*_SECRET", true},
    {"DB_PASSWORD", "*_PASSWORD", true},
    {"LDAP_PASSWD", "*_PASSWD", true},
    {"GPG_PASSPHRASE", "*_PASSPHRASE", true},
    {"OPENAI_API_KEY", "*_KEY", true},
    {"SENDGRID_APIKEY", "*_APIKEY", true},
    {"NPM_AUTH", "*_AUTH", true},
    {"NODE_AUTHTOKEN", "*_AUTHTOKEN", true},
    {"VAULT_CREDENTIAL", "*_CREDENTIAL", true},
    {"GOOGLE_APPLICATION_CREDENTIALS", "*_CREDENTIALS", true},
    {"MY_SECRET_VALUE", "*_SECRET_*", true},
    {"SESSION_JWT_SIGNING", "*_JWT*", true},
    {"SECRET_KEY_BASE", "SECRET_*", true},  // Rails
    {"GH_PAT", "*_PAT", true},              // a personal access token
    {"SENTRY_DSN", "*_DSN", true},          // a DSN holds its key
    {"PRIVATE_KEY_PEM", "*PRIVATE_KEY*", true},
    {"AWS_REGION", "AWS_*", true},
    {"TF_TOKEN_app_terraform_io", "TF_TOKEN_*", true},
    {"OP_SESSION_my", "OP_SESSION_*", true},
    {"TOKEN", "TOKEN", true},
    {"SECRET", "SECRET", true},
    {"PASSWORD", "PASSWORD", true},
    {"API_KEY", "*_KEY", true},
    {"PGPASSWORD", "PGPASSWORD", true},
    {"MYSQL_PWD", "MYSQL_PWD", true},
    {"BW_SESSION", "BW_SESSION", true},
    {"DOCKER_AUTH_CONFIG", "DOCKER_AUTH_CONFIG", true},
    {"SSH_AUTH_SOCK", "SSH_AUTH_SOCK", true},
    {"GPG_AGENT_INFO", "GPG_AGENT_INFO", true},
    // Case does not matter: npm and CI systems use lower-case names.
    {"github_token", "*_TOKEN", true},
    {"npm_config_//registry.npmjs.org/:_authToken", "*_AUTHTOKEN", true},
    {"aws_secret_access_key", "*_KEY", true},
    // Near misses stay.
    {"PATH", nullptr, false},
    {"LANG", nullptr, false},
    {"TOKENIZERS_PARALLELISM", nullptr, false},  // starts with TOKEN, is not it
    {"MONKEY", nullptr, false},                  // ends with KEY, not _KEY
    {"AWSOME", nullptr, false},                  // AWS without the '_'
    {"SSH_AUTH_SOCKET", nullptr, false},         // an exact name is exact
    {"PASSWORD_HINT", nullptr, false},
    {"KEYBOARD_LAYOUT", nullptr, false},
    {"SECRETARY", nullptr, false},      // SECRET without the '_'
    {"DISPATCH_PATH", nullptr, false},  // ends with _PATH, not _PAT
    {"COMPAT", nullptr, false},
    // What cordon sets itself stays, whatever it matches.
    {"HOME", nullptr, false},
    {"TMPDIR", nullptr, false},
    {"LD_PRELOAD", nullptr, false},
    {"CORDON_SESSION_TOKEN", "*_TOKEN", false},
};

TEST(EnvScrub, EachNameMatchesItsPatternAndIsRemovedOrKept) {
  for (const Row& r : kRows) {
    const char* p = SecretEnvPattern(r.name);
    EXPECT_STREQ(p, r.pattern) << r.name;
    EXPECT_EQ(RemovedFromToolEnv(r.name, {}), r.removed) << r.name;
  }
}

// A pattern added without a row here fails: each one must be seen to work.
TEST(EnvScrub, EveryPatternHasARow) {
  std::set<std::string> seen;
  for (const Row& r : kRows) {
    if (r.pattern != nullptr) seen.insert(r.pattern);
  }
  for (const char* p : SecretEnvPatterns()) EXPECT_TRUE(seen.count(p)) << p << " has no row";
}

TEST(EnvScrub, EnvKeepKeepsExactlyTheNamedVariable) {
  const std::vector<std::string> keep = {"GITHUB_TOKEN", "AWS_REGION"};
  EXPECT_FALSE(RemovedFromToolEnv("GITHUB_TOKEN", keep));
  EXPECT_FALSE(RemovedFromToolEnv("AWS_REGION", keep));
  EXPECT_TRUE(RemovedFromToolEnv("github_token", keep)) << "--env-keep is case-sensitive";
  EXPECT_TRUE(RemovedFromToolEnv("MY_GITHUB_TOKEN", keep)) << "and exact";
  EXPECT_TRUE(RemovedFromToolEnv("AWS_SECRET_ACCESS_KEY", keep)) << "the family stays removed";
}

TEST(EnvScrub, ScrubEnvDropsTheSecretsAndNamesThem) {
  const std::vector<std::string> env = {"PATH=/usr/bin",     "GITHUB_TOKEN=ghp_x",
                                        "AWS_PROFILE=p",     "SSH_AUTH_SOCK=/run/agent",
                                        "NPM_TOKEN=keep-me", "HOME=/h",
                                        "NOEQUALS_TOKEN",    "CORDON_RUN_TOKEN=1"};
  std::vector<std::string> removed;
  std::vector<std::string> out = ScrubEnv(env, {"NPM_TOKEN"}, &removed);
  EXPECT_THAT(out, ElementsAre("PATH=/usr/bin", "NPM_TOKEN=keep-me", "HOME=/h", "NOEQUALS_TOKEN",
                               "CORDON_RUN_TOKEN=1"));
  EXPECT_THAT(removed, ElementsAre("GITHUB_TOKEN", "AWS_PROFILE", "SSH_AUTH_SOCK"));
  EXPECT_EQ(ScrubEnv(env, {}).size(), 4u) << "NPM_TOKEN goes without --env-keep";
}

// A value that is a URL with a password is a secret whatever its name
// (DATABASE_URL, a proxy's); a URL without one, or a user alone, is not.
TEST(EnvScrub, AUrlWithAPasswordIsRemovedWhateverItsName) {
  EXPECT_TRUE(UrlWithPassword("postgres://app:pw@db:5432/x"));
  EXPECT_TRUE(UrlWithPassword("http://user:p%40ss@proxy:3128"));
  EXPECT_TRUE(UrlWithPassword("redis://:pw@cache:6379"));
  EXPECT_FALSE(UrlWithPassword("https://github.com/o/r.git"));
  EXPECT_FALSE(UrlWithPassword("ssh://git@github.com/o/r.git"));
  EXPECT_FALSE(UrlWithPassword("git@github.com:o/r.git"));
  EXPECT_FALSE(UrlWithPassword("https://host/path?next=a:b@c"));
  EXPECT_FALSE(UrlWithPassword("plain:text@value"));
  const std::vector<std::string> env = {"DATABASE_URL=postgres://app:pw@db/x",
                                        "REPO=https://github.com/o/r", "KEEP_URL=https://u:p@h/",
                                        "CORDON_X=http://a:b@c/"};
  std::vector<std::string> removed;
  EXPECT_THAT(ScrubEnv(env, {"KEEP_URL"}, &removed),
              ElementsAre("REPO=https://github.com/o/r", "KEEP_URL=https://u:p@h/",
                          "CORDON_X=http://a:b@c/"));
  EXPECT_THAT(removed, ElementsAre("DATABASE_URL"));
}

}  // namespace
}  // namespace cordon::policy
