// engine/analysis/detector.cpp — option merging for detectors.
#include "engine/analysis/detector.hpp"

#include "engine/common/error.hpp"

namespace proflint {

OptionValues::OptionValues(const std::vector<OptionSpec>& specs, const nlohmann::json& overrides) {
  for (const auto& spec : specs) values_[spec.name] = spec.default_value;
  if (overrides.is_object()) {
    for (const auto& [key, value] : overrides.items()) {
      auto it = values_.find(key);
      if (it == values_.end()) throw Error("unknown option '" + key + "'");
      bool same_kind = (it->is_number() && value.is_number()) || (it->is_boolean() && value.is_boolean()) ||
                       (it->is_string() && value.is_string()) || (it->is_array() && value.is_array());
      if (!same_kind) throw Error("option '" + key + "' must be a " + std::string(it->type_name()) + ", got " + value.type_name());
      *it = value;
    }
  }
}

const nlohmann::json& OptionValues::raw(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw Error("internal: detector asked for undeclared option '" + name + "'");
  return *it;
}

double OptionValues::number(const std::string& name) const { return raw(name).get<double>(); }
int64_t OptionValues::integer(const std::string& name) const { return static_cast<int64_t>(raw(name).get<double>()); }
bool OptionValues::boolean(const std::string& name) const { return raw(name).get<bool>(); }
std::string OptionValues::text(const std::string& name) const { return raw(name).get<std::string>(); }

}  // namespace proflint
