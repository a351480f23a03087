// tests/detectors/registry_test.cpp — every registered detector is sorted, documented and usable.
#include <gtest/gtest.h>

#include <regex>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/docs.hpp"
#include "engine/analysis/facts.hpp"

using namespace proflint;

TEST(DetectorRegistry, SortedUniqueKebabCaseIds) {
  const auto& all = detector_registry();
  ASSERT_FALSE(all.empty());
  std::regex kebab("^[a-z][a-z0-9]*(-[a-z0-9]+)*$");
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_TRUE(std::regex_match(std::string(all[i].id), kebab)) << all[i].id;
    if (i > 0) EXPECT_LT(all[i - 1].id, all[i].id) << "registry must be sorted by id";
  }
}

TEST(DetectorRegistry, EachHasDocTitleAndKnownNeeds) {
  const auto& needs = known_needs();
  for (const auto& info : detector_registry()) {
    EXPECT_TRUE(detector_docs().count(std::string(info.id))) << "missing docs/detectors/" << info.id << ".md";
    auto d = info.make(OptionValues(info.options, nlohmann::json::object()));
    EXPECT_EQ(d->id(), info.id);
    EXPECT_FALSE(d->title().empty());
    for (const auto& n : d->needs()) EXPECT_NE(std::find(needs.begin(), needs.end(), n), needs.end()) << info.id << ": " << n;
    for (const auto& o : info.options) {
      EXPECT_FALSE(o.doc.empty()) << info.id << "." << o.name;
      auto doc = detector_docs().at(std::string(info.id));
      EXPECT_NE(doc.find("`" + o.name + "`"), std::string::npos) << "option " << o.name << " not documented in " << info.id << ".md";
    }
  }
}

TEST(DetectorRegistry, UnknownOptionIsRejected) {
  for (const auto& info : detector_registry()) {
    EXPECT_THROW(info.make(OptionValues(info.options, {{"no_such_option", 1}})), std::exception) << info.id;
  }
}
