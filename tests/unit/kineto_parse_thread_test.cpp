// tests/unit/kineto_parse_thread_test.cpp — the Kineto importer's events parsed on a thread of
// their own (ParseAhead, PROFLINT_PARSE_THREAD=1) give the store the importer gives when it parses
// them itself: every table, every row. The generated trace has texts with escapes (which the
// parser unescapes into its own buffer and the stage must keep), counters (numeric arguments),
// metadata events and shapes, over several batches.
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "engine/pipeline/load.hpp"
#include "engine/store/store.hpp"
#include "tests/support/run.hpp"
#include "tests/support/scoped_env.hpp"
#include "tests/support/store_dump.hpp"

using namespace proflint;
using proflint::testing::ScopedEnv;
namespace fs = std::filesystem;

namespace {

std::string load_dump(const std::string& path, const char* parse_thread) {
  ScopedEnv scan("PROFLINT_SCAN_THREAD", "1");
  ScopedEnv parse("PROFLINT_PARSE_THREAD", parse_thread);
  Store store = load_inputs({path}, LoadOptions{});
  return proflint::testing::dump_tables(store.db());
}

// A trace of `steps` iterations whose names, categories and arguments carry JSON escapes.
std::string escaped_trace(int steps) {
  std::string t = R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU \"0\"", "computeMajor": 8}],
  "traceEvents": [
  {"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {"name": "train\\worker \"7\""}},
  {"ph": "M", "name": "thread_name", "pid": 7, "tid": 8, "args": {"name": "main\tthread"}})";
  for (int i = 0; i < steps; ++i) {
    const int64_t base = 1'000'000 + int64_t{i} * 1000;
    const std::string n = std::to_string(i);
    auto at = [&](int64_t us) { return std::to_string(base + us); };
    t += ",\n{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#" + n + "\", \"pid\": 7, \"tid\": 8, \"ts\": " +
         at(0) + ", \"dur\": 900}";
    t += ",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\\u00e9_\\\"" + std::to_string(i % 5) +
         "\\\"\", \"pid\": 7, \"tid\": 8, \"ts\": " + at(10) +
         ", \"dur\": 100, \"args\": {\"External id\": " + std::to_string(10 * i + 1) +
         ", \"Input Dims\": [[2, 3], []], \"Input type\": [\"float\", \"\"], \"Call stack\": \"train.py(1): f\\nmodel.py(" + n +
         "): g\", \"Module Hierarchy\": \"Net\\\\Block\"}}";
    t += ",\n{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 7, \"tid\": 8, \"ts\": " + at(20) +
         ", \"dur\": 5, \"args\": {\"correlation\": " + std::to_string(100000 + i) + ", \"External id\": " +
         std::to_string(10 * i + 1) + "}}";
    t += ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void k<\\\"" + std::to_string(i % 3) +
         "\\\">(float*)\", \"pid\": 0, \"tid\": 7, \"ts\": " + at(30) + ", \"dur\": 50, \"args\": {\"device\": 0, \"stream\": 7, " +
         "\"correlation\": " + std::to_string(100000 + i) + ", \"grid\": [1, 2, 3], \"block\": [32, 1, 1], \"External id\": " +
         std::to_string(10 * i + 1) + "}}";
    t += ",\n{\"ph\": \"C\", \"name\": \"GPU \\\"mem\\\"\", \"pid\": 0, \"ts\": " + at(40) + ", \"args\": {\"bytes \\\"used\\\"\": " +
         std::to_string(i * 3) + ".5, \"plain\": 2}}";
  }
  t += "\n]}";
  return t;
}

}  // namespace

TEST(KinetoParseThread, SameStoreAsParsingOnTheSinksThread) {
  fs::path dir = fs::path(::testing::TempDir()) / ("proflint_parse_thread_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string generated = (dir / "escaped.json").string();
  {
    std::ofstream out(generated);
    out << escaped_trace(3000);  // ~15,000 events: several batches of 1024 events
  }
  std::vector<std::string> paths = {generated,
                                    (proflint::testing::source_dir() / "fixtures/sample_train.json.gz").string(),
                                    (proflint::testing::source_dir() / "fixtures/item_in_logging_with_stack.json.gz").string()};
  for (const auto& path : paths) {
    SCOPED_TRACE(path);
    const std::string own = load_dump(path, "0");
    ASSERT_NE(own.find("## _kernel\n"), std::string::npos);
    EXPECT_TRUE(load_dump(path, "1") == own) << "parsed on a thread of their own, the events gave another store";
  }
  // The generated trace's escapes came through unescaped.
  const std::string own = load_dump(generated, "1");
  EXPECT_NE(own.find("aten::addé_\"3\""), std::string::npos);
  EXPECT_NE(own.find("void k<\"2\">(float*)"), std::string::npos);
  EXPECT_NE(own.find("train\\worker \"7\""), std::string::npos);
  fs::remove_all(dir);
}
