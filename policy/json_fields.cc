#include "policy/json_fields.h"

namespace cordon::policy {
namespace {

const nlohmann::json* At(const nlohmann::json& msg, const char* key) {
  if (!msg.is_object()) return nullptr;
  auto it = msg.find(key);
  return it == msg.end() ? nullptr : &*it;
}

}  // namespace

std::string StringField(const nlohmann::json& msg, const char* key, std::string absent) {
  const nlohmann::json* v = At(msg, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : absent;
}

bool BoolField(const nlohmann::json& msg, const char* key, bool absent) {
  const nlohmann::json* v = At(msg, key);
  return v != nullptr && v->is_boolean() ? v->get<bool>() : absent;
}

uint64_t UintField(const nlohmann::json& msg, const char* key, uint64_t absent) {
  const nlohmann::json* v = At(msg, key);
  if (v == nullptr || !v->is_number_integer()) return absent;
  if (v->is_number_unsigned()) return v->get<uint64_t>();
  const int64_t n = v->get<int64_t>();
  return n >= 0 ? static_cast<uint64_t>(n) : absent;
}

nlohmann::json ArrayField(const nlohmann::json& msg, const char* key) {
  const nlohmann::json* v = At(msg, key);
  return v != nullptr && v->is_array() ? *v : nlohmann::json::array();
}

}  // namespace cordon::policy
