// tests/cli/flags_test.cpp — issue 21 points 9 and 10 through the real binary: --key-node that
// matches nothing is said (stderr and the no-iterations finding), DLProf's spellings and Op IDs,
// report --formats both, --fail-on-rule-error (and CI=true), --progress without a terminal.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/run.hpp"

using namespace proflint::testing;
namespace fs = std::filesystem;

namespace {

std::string root() { return source_dir().string(); }

std::string temp_dir(const std::string& name) {
  std::string dir = ::testing::TempDir() + "flags_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Like run_proflint_in, with `env` (e.g. "CI=true") in front of the command.
RunResult run_with_env(const std::string& env, const std::string& args) {
  std::string base = ::testing::TempDir() + "flags_run_" + std::to_string(getpid());
  std::string cmd = "cd " + shell_quote(root()) + " && " + env + " NO_COLOR=1 " + shell_quote(proflint_binary()) + " " +
                    args + " >" + base + ".out 2>" + base + ".err";
  int status = std::system(cmd.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  return r;
}

// One aten::mm launching one kernel: no step marker, nothing repeats, so no iterations.
std::string one_op_trace() {
  std::string path = ::testing::TempDir() + "flags_one_op.json";
  std::ofstream(path) << R"({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 10, "args": {"External id": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 2, "dur": 3,
   "args": {"correlation": 1, "External id": 1}},
  {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 6, "dur": 20,
   "args": {"correlation": 1, "device": 0, "stream": 7, "External id": 1}}
]})";
  return path;
}

}  // namespace

TEST(CliKeyNode, AKeyNodeThatMatchesNothingIsSaid) {
  auto r = run_proflint_in(root(), "summary fixtures/sample_train.json.gz --key-node nosuchnode");
  EXPECT_EQ(r.exit_code, 0) << r.err;  // the other iteration sources still apply
  EXPECT_NE(r.err.find("proflint: warning: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sample_train.json.gz: key node 'nosuchnode' not found; candidates: '"), std::string::npos)
      << r.err;
  // A key node that matches says nothing.
  auto ok = run_proflint_in(root(), "summary fixtures/sample_train.json.gz --key-node ProfilerStep");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.err.find("warning"), std::string::npos) << ok.err;
}

TEST(CliKeyNode, TheNoIterationsFindingNamesTheMissAndTheCandidates) {
  std::string trace = one_op_trace();
  auto r = run_proflint("analyze " + shell_quote(trace) + " --format json --key-node aten::mmm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  std::string problem;
  for (const auto& f : j["diagnostics"])
    if (f["id"] == "no-iterations") problem = f["problem"];
  EXPECT_NE(problem.find("--key-node (key node 'aten::mmm' not found; candidates: 'aten::mm' (1×)"), std::string::npos)
      << problem;
  EXPECT_NE(r.err.find("key node 'aten::mmm' not found; candidates: 'aten::mm' (1×)"), std::string::npos) << r.err;
  // Without --key-node the finding says it was not given.
  auto plain = run_proflint("analyze " + shell_quote(trace) + " --format json");
  EXPECT_NE(plain.out.find("--key-node (not given)"), std::string::npos);
}

TEST(CliKeyNode, DlprofSpellingsAreAliases) {
  auto a = run_proflint_in(root(), "summary fixtures/sample_train.json.gz --format json --key_node ProfilerStep "
                                   "--iter_start 1 --iter_stop 2");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto b = run_proflint_in(root(), "summary fixtures/sample_train.json.gz --format json --key-node ProfilerStep "
                                   "--iter-start 1 --iter-stop 2");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("\"key_node\""), std::string::npos);
}

TEST(CliKeyNode, AnOpIdFromTheDetailReportStandsForItsOp) {
  // Take the Op ID of the top-level aten::cross_entropy_loss (once per step) from the detail
  // report, then use it as --key-node.
  std::string dir = temp_dir("detail");
  auto rep = run_proflint_in(root(), "report fixtures/sample_train.json.gz --reports detail --formats json "
                                     "--output-path " + shell_quote(dir));
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  auto detail = nlohmann::json::parse(slurp(dir + "/proflint_detail.json"));
  std::string op_id;
  for (const auto& table : detail["tables"])
    for (const auto& row : table["rows"])
      if (table["name"] == "detail" && row["Op Name"] == "/aten::cross_entropy_loss") op_id = row["Op ID"];
  ASSERT_EQ(op_id.size(), 12u);
  auto by_id = run_proflint_in(root(), "summary fixtures/sample_train.json.gz --format json --key-node " + op_id);
  ASSERT_EQ(by_id.exit_code, 0) << by_id.err;
  EXPECT_NE(by_id.err.find("--key-node " + op_id + " is the Op ID of 'aten::cross_entropy_loss'"), std::string::npos)
      << by_id.err;
  EXPECT_EQ(by_id.err.find("warning"), std::string::npos) << by_id.err;
  auto by_name =
      run_proflint_in(root(), "summary fixtures/sample_train.json.gz --format json --key-node aten::cross_entropy_loss");
  ASSERT_EQ(by_name.exit_code, 0) << by_name.err;
  EXPECT_EQ(by_id.out, by_name.out);
}

TEST(CliReport, FormatsBothWritesCsvAndJson) {
  std::string dir = temp_dir("both");
  auto r = run_proflint_in(root(), "report fixtures/sample_train.json.gz --reports summary --formats both "
                                   "--output-path " + shell_quote(dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/proflint_summary.csv"));
  EXPECT_TRUE(fs::exists(dir + "/proflint_summary.json"));
  auto bad = run_proflint_in(root(), "report fixtures/sample_train.json.gz --reports summary --formats bothh "
                                     "--output-path " + shell_quote(temp_dir("bad")));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("unknown report format 'bothh' (did you mean 'both'?); choose csv, json or both"),
            std::string::npos)
      << bad.err;
}

// query --format json keeps each value's type: NULL, '' and 'NA' stay three values (CSV writes the
// first two alike), integers stay integers, a non-finite real is null. The kernel count is the raw
// file's 1188 events of cat "kernel" (python3 over the JSON).
TEST(CliQuery, JsonKeepsTypesAndNulls) {
  auto r = run_proflint_in(root(), "query fixtures/sample_train.json.gz --format json "
                                   "\"SELECT NULL AS a, '' AS b, 'NA' AS c, 1.5 AS x, 9e999 AS inf, "
                                   "(SELECT count(*) FROM kernel) AS n\"");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["columns"], nlohmann::json({"a", "b", "c", "x", "inf", "n"}));
  ASSERT_EQ(doc["rows"].size(), 1u);
  const auto& row = doc["rows"][0];
  EXPECT_TRUE(row[0].is_null());
  EXPECT_EQ(row[1], "");
  EXPECT_EQ(row[2], "NA");
  EXPECT_DOUBLE_EQ(row[3].get<double>(), 1.5);
  EXPECT_TRUE(row[4].is_null());
  EXPECT_TRUE(row[5].is_number_integer());
  EXPECT_EQ(row[5], 1188);
  auto csv = run_proflint_in(root(), "query fixtures/sample_train.json.gz \"SELECT NULL AS a, '' AS b\"");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out, "a,b\n,\n");
  auto bad = run_proflint_in(root(), "query fixtures/sample_train.json.gz --format xml \"SELECT 1\"");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
}

TEST(CliRules, FailOnRuleErrorDecidesTheExitCode) {
  std::string dir = temp_dir("broken_rules");
  std::ofstream(dir + "/broken.lua") << "return { id = 'broken', title = 't', evaluate = function(ctx) error('boom') end }\n";
  std::string args = "analyze fixtures/sample_train.json.gz --format json --rules " + shell_quote(dir);
  auto off = run_with_env("CI=", args);
  EXPECT_EQ(off.exit_code, 0) << off.err;
  auto on = run_with_env("CI=", args + " --fail-on-rule-error");
  EXPECT_EQ(on.exit_code, 2);
  EXPECT_NE(on.err.find("proflint: error: 1 Lua rule error (see the rule-error findings); exiting with 2 because of "
                        "--fail-on-rule-error"),
            std::string::npos)
      << on.err;
  // The output is complete all the same, rule-error included.
  auto j = nlohmann::json::parse(on.out);
  bool found = false;
  for (const auto& f : j["diagnostics"]) found = found || f["id"] == "rule-error";
  EXPECT_TRUE(found);
  // On by default under CI=true, unless turned off.
  EXPECT_EQ(run_with_env("CI=true", args).exit_code, 2);
  EXPECT_EQ(run_with_env("CI=1", args).exit_code, 2);
  EXPECT_EQ(run_with_env("CI=true", args + " --no-fail-on-rule-error").exit_code, 0);
  EXPECT_EQ(run_with_env("CI=false", args).exit_code, 0);
  // Healthy rules never change it.
  EXPECT_EQ(run_with_env("CI=true", "analyze fixtures/sample_train.json.gz --format json").exit_code, 0);
}

// Every command that runs the Lua rules honours the flags as analyze does (it was analyze alone):
// the outputs are written whole, then the exit code is 2.
TEST(CliRules, FailOnRuleErrorAppliesToReportCompareAndExport) {
  std::string dir = temp_dir("broken_rules_all");
  std::ofstream(dir + "/broken.lua") << "return { id = 'broken', title = 't', evaluate = function(ctx) error('boom') end }\n";
  const std::string rules = " --rules " + shell_quote(dir);
  const std::string trace = "fixtures/sample_train.json.gz";
  struct Case {
    std::string name, args, output;  // output: a file the command writes, which must exist after exit 2
  };
  std::vector<Case> cases = {
      {"report", "report " + trace + " --reports expert_systems --force --output-path " + shell_quote(dir + "/reports"),
       dir + "/reports/proflint_expert_systems.csv"},
      {"compare", "compare " + trace + " " + trace + " --format json -o " + shell_quote(dir + "/gate.json"),
       dir + "/gate.json"},
      {"export", "export " + trace + " --format chrome -o " + shell_quote(dir + "/trace.json"), dir + "/trace.json"},
  };
  for (const auto& c : cases) {
    auto off = run_with_env("CI=", c.args + rules);
    EXPECT_EQ(off.exit_code, 0) << c.name << ": " << off.err;
    fs::remove(c.output);
    auto on = run_with_env("CI=", c.args + rules + " --fail-on-rule-error");
    EXPECT_EQ(on.exit_code, 2) << c.name << ": " << on.err;
    EXPECT_NE(on.err.find("Lua rule error"), std::string::npos) << c.name << ": " << on.err;
    EXPECT_NE(on.err.find("exiting with 2 because of --fail-on-rule-error"), std::string::npos) << c.name << ": " << on.err;
    EXPECT_TRUE(fs::exists(c.output)) << c.name << ": the output is complete all the same";
    EXPECT_EQ(run_with_env("CI=true", c.args + rules).exit_code, 2) << c.name;
    EXPECT_EQ(run_with_env("CI=true", c.args + rules + " --no-fail-on-rule-error").exit_code, 0) << c.name;
  }
  // compare runs the rule on both sides: two rule-error findings.
  auto both = run_with_env("CI=true", cases[1].args + rules);
  EXPECT_NE(both.err.find("proflint: error: 2 Lua rule errors"), std::string::npos) << both.err;
  // The rule-error is in the expert_systems report that was written.
  EXPECT_NE(slurp(cases[0].output).find("rule-error"), std::string::npos);
  // No rules run, nothing to fail: a report without expert_systems, an export without findings.
  EXPECT_EQ(run_with_env("CI=true", "report " + trace + " --reports summary --force --output-path " +
                                        shell_quote(dir + "/reports") + rules)
                .exit_code,
            0);
  EXPECT_EQ(run_with_env("CI=true", cases[2].args + " --no-findings" + rules).exit_code, 0);
}

TEST(CliProgress, PlainLinesWithoutATerminal) {
  auto r = run_proflint_in(root(), "summary fixtures/sample_train.json.gz --progress");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("proflint: reading sample_train.json.gz: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("% ("), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << "no bar redrawing in a log";
  EXPECT_EQ(r.err.find("\033["), std::string::npos);
  // One line per 10% at most.
  size_t lines = 0;
  std::istringstream in(r.err);
  for (std::string line; std::getline(in, line);) lines += line.rfind("proflint: reading ", 0) == 0;
  EXPECT_GE(lines, 1u);
  EXPECT_LE(lines, 11u);
  auto nsys = run_proflint_in(root(), "summary fixtures/sample_train.nsys.sqlite --progress");
  ASSERT_EQ(nsys.exit_code, 0) << nsys.err;
  EXPECT_NE(nsys.err.find("proflint: reading sample_train.nsys.sqlite: "), std::string::npos) << nsys.err;
  EXPECT_NE(nsys.err.find(" rows)"), std::string::npos) << nsys.err;
  // Not asked for and no terminal: nothing.
  auto quiet = run_proflint_in(root(), "summary fixtures/sample_train.json.gz");
  EXPECT_EQ(quiet.err.find("reading"), std::string::npos) << quiet.err;
}
