// A field of a JSON message that came over a socket, read without trusting
// its shape: the value when the message is an object holding one of that
// type at `key`, else `absent`. nlohmann's value() throws on a wrong type,
// and an exception out of a supervisor's thread ends the run. Pure.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace cordon::policy {

std::string StringField(const nlohmann::json& msg, const char* key, std::string absent = "");
bool BoolField(const nlohmann::json& msg, const char* key, bool absent = false);
uint64_t UintField(const nlohmann::json& msg, const char* key, uint64_t absent = 0);
// An array there, else an empty one.
nlohmann::json ArrayField(const nlohmann::json& msg, const char* key);

}  // namespace cordon::policy
