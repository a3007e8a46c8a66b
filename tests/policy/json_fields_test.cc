// policy/json_fields.h and the approval protocol's hello: what comes over a
// socket is read without trusting its shape (approval_fuzz found CheckHello
// throwing on a message that was no object).
#include "policy/json_fields.h"

#include <gtest/gtest.h>

#include "policy/approval_protocol.h"

namespace cordon::policy {
namespace {

using nlohmann::json;

TEST(JsonFields, AFieldOfTheWrongTypeOrNoObjectIsAbsent) {
  const json good = {{"s", "x"}, {"b", true}, {"u", 7}, {"a", {1, 2}}};
  EXPECT_EQ(StringField(good, "s"), "x");
  EXPECT_TRUE(BoolField(good, "b"));
  EXPECT_EQ(UintField(good, "u"), 7u);
  EXPECT_EQ(ArrayField(good, "a").size(), 2u);
  for (const json& bad : {json(5), json("s"), json::array({1}), json(nullptr),
                          json{{"s", 5}, {"b", "yes"}, {"u", -1}, {"a", "no"}}}) {
    EXPECT_EQ(StringField(bad, "s", "absent"), "absent") << bad.dump();
    EXPECT_FALSE(BoolField(bad, "b")) << bad.dump();
    EXPECT_EQ(UintField(bad, "u", 9), 9u) << bad.dump();
    EXPECT_TRUE(ArrayField(bad, "a").empty()) << bad.dump();
  }
}

TEST(CheckHello, AnyMessageIsAnsweredNeverThrown) {
  EXPECT_EQ(CheckHello(HelloMessage("service")), "");
  EXPECT_EQ(CheckHello(json(1)), "expected hello");
  EXPECT_EQ(CheckHello(json::array()), "expected hello");
  EXPECT_EQ(CheckHello(json{{"type", 5}}), "expected hello");
  EXPECT_EQ(CheckHello(json{{"type", "error"}, {"message", 5}}), "service error: ?");
  EXPECT_EQ(CheckHello(json{{"type", "error"}, {"message", "busy"}}), "service error: busy");
  EXPECT_NE(CheckHello(json{{"type", "hello"}, {"version", "1"}}), "");
}

}  // namespace
}  // namespace cordon::policy
