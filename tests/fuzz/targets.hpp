// tests/fuzz/targets.hpp — the body of every fuzz target, one function per target, shared by the
// libFuzzer executables (tests/fuzz/fuzz_TARGET.cpp) and by the regression test that replays every
// input once found to break proflint (tests/unit/fuzz_regressions_test.cpp, on the files under
// tests/fuzz/regressions/TARGET/). docs/fuzzing.md describes each target.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/facts.hpp"
#include "engine/analysis/summary.hpp"
#include "engine/config/config.hpp"
#include "engine/import/kineto/kineto_importer.hpp"
#include "engine/import/nsys/nsys_importer.hpp"
#include "engine/lua/rules.hpp"
#include "engine/pipeline/analyze.hpp"
#include "engine/pipeline/load.hpp"
#include "engine/report/findings_report.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace proflint::fuzz {

// Kineto JSON importer (plain and gzip) on arbitrary bytes. Fast: import into an empty store
// (emptied again afterwards), no derivation.
inline void kineto(const uint8_t* data, size_t size) {
  static InputFile input(".json");
  const std::string& path = input.write(data, size);
  static ReusedStore store;
  refusals_allowed([&] { KinetoImporter().import(path, store.get(), {}); });
  store.reset();
}

// Nsight Systems SQLite importer on arbitrary bytes (SQLite reads files, so they are written to
// one). Fast: import into an empty store, no derivation.
inline void nsys(const uint8_t* data, size_t size) {
  static InputFile input(".sqlite");
  const std::string& path = input.write(data, size);
  static ReusedStore store;
  refusals_allowed([&] { NsysImporter().import(path, store.get(), {}); });
  store.reset();
}

// Loading a saved store (`proflint analyze run.db`): the header check, the copy into memory,
// schema upgrades of older stores, and derivation of traces the store marks as not derived.
inline void store(const uint8_t* data, size_t size) {
  static InputFile input(".db");
  const std::string& path = input.write(data, size);
  // Bytes that do not claim to be a store go to the importers, which have targets of their own.
  if (!Store::is_store_file(path)) return;
  refusals_allowed([&] {
    LoadOptions options;
    options.jobs = 1;
    Store loaded = load_inputs({path}, options);
  });
}

// proflint.toml on arbitrary text. A configuration that parses must survive the round trip that
// `proflint config dump` promises: its dump parses again and dumps to the same text.
inline void config(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::optional<Config> parsed;
  refusals_allowed([&] { parsed = parse_config(text, "fuzz.toml"); });
  if (!parsed) return;
  std::string dumped = dump_config(*parsed);
  std::string again;
  try {
    again = dump_config(parse_config(dumped, "fuzz.toml"));  // same name: the dump quotes it
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: the dump of a valid configuration does not parse: %s\n--- dump ---\n%s\n", e.what(),
                 dumped.c_str());
    std::abort();
  }
  if (again != dumped) {
    std::fprintf(stderr, "fuzz: dump -> parse -> dump changed the text\n--- first ---\n%s\n--- second ---\n%s\n",
                 dumped.c_str(), again.c_str());
    std::abort();
  }
}

// A hostile rule file: the input is the text of one Lua rule, loaded and validated in the sandbox
// and, when valid, evaluated on every trace of a small store (fixtures/dataparallel_2gpu.json,
// imported and derived once) under a ReadOnlyGuard, as the analysis runner does. Limits are
// tighter than the defaults so that one input costs milliseconds. A rule may fail in any way it
// likes, but only as a rule-error finding: run_rule never throws.
struct LuaFixture {
  std::unique_ptr<Store> store;
  std::unique_ptr<Facts> facts;
  std::unique_ptr<ReadOnlyGuard> guard;
  RuleLimits limits;
};

inline LuaFixture& lua_fixture() {
  static LuaFixture* fixture = [] {
    auto* f = new LuaFixture;  // lives as long as the process
    const char* dir = std::getenv("PROFLINT_SOURCE_DIR");
    std::string path = std::string(dir && *dir ? dir : PROFLINT_SOURCE_DIR) + "/fixtures/dataparallel_2gpu.json";
    LoadOptions options;
    options.jobs = 1;
    f->store = std::make_unique<Store>(load_inputs({path}, options));
    f->facts = std::make_unique<Facts>(*f->store, summarize(*f->store));
    f->guard = std::make_unique<ReadOnlyGuard>(f->store->db());
    f->limits.instruction_limit = 200'000;
    f->limits.memory_limit_mb = 16;
    f->limits.query_time_limit_ms = 200;
    return f;
  }();
  return *fixture;
}

inline void lua_rule(const uint8_t* data, size_t size) {
  LuaFixture& fx = lua_fixture();
  lua::RuleFile file{"fuzz.lua", std::string(reinterpret_cast<const char*>(data), size), false};
  lua::RuleInfo info = lua::load_rule(file, fx.limits);
  if (!info.ok()) return;
  for (const auto& summary : fx.facts->summaries()) {
    VectorSink sink;
    lua::run_rule(info, file, nlohmann::json::object(), *fx.facts, summary.trace_id, fx.limits, sink);
  }
}

// End to end on arbitrary bytes: sniff and import (any format), derive, run every built-in
// detector and the shipped Lua rules on one thread, render the findings as JSON and SARIF.
// Slow (tens of inputs per second); the importer targets are the fast ones.
inline void pipeline(const uint8_t* data, size_t size) {
  static InputFile input(".trace");
  static const std::vector<lua::RuleFile> rules = lua::shipped_rules();
  const std::string& path = input.write(data, size);
  refusals_allowed([&] {
    LoadOptions load;
    load.jobs = 1;
    Store store = load_inputs({path}, load);
    AnalysisOptions analysis;
    analysis.jobs = 1;
    analysis.rule_files = rules;
    analysis.rule_limits.instruction_limit = 20'000'000;
    analysis.rule_limits.query_time_limit_ms = 2'000;
    AnalysisResult result = run_analysis(store, analysis, detector_registry());
    render_findings_json(result);
    render_findings_sarif(result);
  });
}

}  // namespace proflint::fuzz
