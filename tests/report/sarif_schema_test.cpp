// tests/report/sarif_schema_test.cpp — `analyze --format sarif` validated against the SARIF 2.1.0
// JSON schema vendored in tests/sarif/ (see its README), with the code locations source attribution
// adds (a physicalLocation with artifactLocation.uri and region.startLine per place).
//
// The validator below implements the draft-04 keywords that schema uses (type, properties,
// additionalProperties, required, items, minItems, uniqueItems, minimum, maximum, enum, pattern,
// anyOf, oneOf, $ref to #/definitions/…); 'format' is not checked (draft-04 makes it optional).
// python3's jsonschema is not installed everywhere the tests run, so the check lives here; the
// negative cases prove it rejects what the schema forbids.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/run.hpp"

namespace proflint {
namespace {

using json = nlohmann::json;

class SchemaValidator {
 public:
  explicit SchemaValidator(json root) : root_(std::move(root)) {}

  // Empty when `doc` is valid; else the first problems, each with its JSON pointer.
  std::vector<std::string> validate(const json& doc) {
    errors_.clear();
    check(doc, root_, "");
    return errors_;
  }

 private:
  const json& resolve(const json& schema) const {
    const json* s = &schema;
    for (int guard = 0; s->is_object() && s->contains("$ref") && guard < 32; ++guard) {
      std::string ref = (*s)["$ref"].get<std::string>();
      const std::string prefix = "#/definitions/";
      if (ref.rfind(prefix, 0) != 0) break;
      s = &root_["definitions"][ref.substr(prefix.size())];
    }
    return *s;
  }

  static bool has_type(const json& v, const std::string& t) {
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "integer") return v.is_number_integer() || v.is_number_unsigned();
    if (t == "number") return v.is_number();
    if (t == "boolean") return v.is_boolean();
    if (t == "null") return v.is_null();
    return false;
  }

  void fail(const std::string& where, const std::string& what) {
    if (errors_.size() < 20) errors_.push_back((where.empty() ? "/" : where) + ": " + what);
  }

  bool valid(const json& v, const json& schema) {
    auto saved = std::move(errors_);
    errors_.clear();
    check(v, schema, "");
    bool ok = errors_.empty();
    errors_ = std::move(saved);
    return ok;
  }

  void check(const json& v, const json& raw, const std::string& where) {
    const json& s = resolve(raw);
    if (!s.is_object()) return;
    if (s.contains("type")) {
      bool ok = false;
      if (s["type"].is_string()) ok = has_type(v, s["type"]);
      else
        for (const auto& t : s["type"]) ok = ok || has_type(v, t);
      if (!ok) return fail(where, "type is not " + s["type"].dump());
    }
    if (s.contains("enum")) {
      bool ok = false;
      for (const auto& e : s["enum"]) ok = ok || e == v;
      if (!ok) fail(where, "value " + v.dump() + " not in enum");
    }
    if (v.is_number()) {
      if (s.contains("minimum") && v.get<double>() < s["minimum"].get<double>()) fail(where, "below minimum");
      if (s.contains("maximum") && v.get<double>() > s["maximum"].get<double>()) fail(where, "above maximum");
    }
    if (v.is_string() && s.contains("pattern")) {
      if (!std::regex_search(v.get<std::string>(), std::regex(s["pattern"].get<std::string>())))
        fail(where, "does not match pattern " + s["pattern"].dump());
    }
    if (v.is_array()) {
      if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>()) fail(where, "too few items");
      if (s.value("uniqueItems", false))
        for (size_t i = 0; i < v.size(); ++i)
          for (size_t j = i + 1; j < v.size(); ++j)
            if (v[i] == v[j]) fail(where, "items are not unique");
      if (s.contains("items"))
        for (size_t i = 0; i < v.size(); ++i) check(v[i], s["items"], where + "/" + std::to_string(i));
    }
    if (v.is_object()) {
      if (s.contains("required"))
        for (const auto& r : s["required"])
          if (!v.contains(r.get<std::string>())) fail(where, "missing required " + r.dump());
      for (const auto& [key, value] : v.items()) {
        if (s.contains("properties") && s["properties"].contains(key)) {
          check(value, s["properties"][key], where + "/" + key);
        } else if (s.contains("additionalProperties")) {
          const json& ap = s["additionalProperties"];
          if (ap.is_boolean() && !ap.get<bool>()) fail(where, "property '" + key + "' is not allowed");
          else if (ap.is_object()) check(value, ap, where + "/" + key);
        }
      }
    }
    if (s.contains("anyOf")) {
      bool ok = false;
      for (const auto& alt : s["anyOf"]) ok = ok || valid(v, alt);
      if (!ok) fail(where, "matches none of anyOf");
    }
    if (s.contains("oneOf")) {
      int n = 0;
      for (const auto& alt : s["oneOf"]) n += valid(v, alt) ? 1 : 0;
      if (n != 1) fail(where, "matches " + std::to_string(n) + " of oneOf");
    }
  }

  json root_;
  std::vector<std::string> errors_;
};

SchemaValidator sarif_validator() {
  std::string text = testing::slurp((testing::source_dir() / "tests" / "sarif" / "sarif-schema-2.1.0.json").string());
  EXPECT_FALSE(text.empty()) << "tests/sarif/sarif-schema-2.1.0.json is missing";
  return SchemaValidator(json::parse(text));
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

json analyze_sarif(const std::string& profile) {
  auto r = testing::run_proflint_in(testing::source_dir().string(), "analyze --format sarif " + testing::shell_quote(profile));
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  return json::parse(r.out);
}

TEST(SarifSchema, ValidatorRejectsWhatTheSchemaForbids) {
  SchemaValidator v = sarif_validator();
  json good = json::parse(R"({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": []}]})");
  EXPECT_TRUE(v.validate(good).empty()) << joined(v.validate(good));
  json no_runs = {{"version", "2.1.0"}};
  EXPECT_FALSE(v.validate(no_runs).empty());
  json bad_version = good;
  bad_version["version"] = "2.0.0";
  EXPECT_FALSE(v.validate(bad_version).empty());
  // region.startLine must be >= 1; an unknown property of a region is not allowed.
  json result = json::parse(R"({"message": {"text": "m"}, "locations": [{"physicalLocation":
      {"artifactLocation": {"uri": "train.py"}, "region": {"startLine": 84}}}]})");
  json with_result = good;
  with_result["runs"][0]["results"] = json::array({result});
  EXPECT_TRUE(v.validate(with_result).empty()) << joined(v.validate(with_result));
  json zero_line = with_result;
  zero_line["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0;
  EXPECT_FALSE(v.validate(zero_line).empty());
  json extra = with_result;
  extra["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["line"] = 3;
  EXPECT_FALSE(v.validate(extra).empty());
}

// The generated with_stack fixture: host-sync's result points at train.py line 84 first (six
// .item() per step in log_metrics, gen_profile.py source-scenario item_in_logging), then at the profile.
TEST(SarifSchema, SourceLocationsOfItemInLoggingAreValid) {
  SchemaValidator v = sarif_validator();
  json doc = analyze_sarif("fixtures/item_in_logging_with_stack.json.gz");
  auto errors = v.validate(doc);
  EXPECT_TRUE(errors.empty()) << joined(errors);
  bool found = false;
  for (const auto& r : doc["runs"][0]["results"]) {
    if (r["ruleId"] != "host-sync") continue;
    found = true;
    ASSERT_TRUE(r.contains("locations"));
    const auto& first = r["locations"][0]["physicalLocation"];
    EXPECT_EQ(first["artifactLocation"]["uri"], "train.py");
    EXPECT_EQ(first["region"]["startLine"], 84);
    EXPECT_NE(r["locations"][0]["message"]["text"].get<std::string>().find("in log_metrics, 6× per step"),
              std::string::npos);
    EXPECT_EQ(r["locations"].back()["physicalLocation"]["artifactLocation"]["uri"],
              "fixtures/item_in_logging_with_stack.json.gz");
  }
  EXPECT_TRUE(found) << "host-sync did not fire on the fixture";
}

TEST(SarifSchema, OutputWithoutSourceIsValid) {
  SchemaValidator v = sarif_validator();
  json doc = analyze_sarif("fixtures/sample_train.json.gz");
  auto errors = v.validate(doc);
  EXPECT_TRUE(errors.empty()) << joined(errors);
}

TEST(SarifSchema, RealTraceWithModulesIsValid) {
  REALDATA_OR_SKIP(path, "kineto/tracelens_h100_bert_small.json.gz");
  SchemaValidator v = sarif_validator();
  json doc = analyze_sarif(path);
  auto errors = v.validate(doc);
  EXPECT_TRUE(errors.empty()) << joined(errors);
}

}  // namespace
}  // namespace proflint
