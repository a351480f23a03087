// tests/unit/jobs_store_test.cpp — jobs derived from whole profiles: which traces form a job
// (--job-by), the collective arguments the importer keeps, alignment on real and generated ranks,
// a CPU-only gloo job, and the summary's per-rank table.
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "engine/analysis/job_summary.hpp"
#include "engine/common/error.hpp"
#include "engine/derive/derive_trace.hpp"
#include "engine/derive/jobs.hpp"
#include "engine/model/model.hpp"
#include "engine/pipeline/load.hpp"
#include "engine/report/dlprof/reports.hpp"
#include "engine/report/summary_report.hpp"
#include "tests/lua/lua_support.hpp"
#include "tests/support/realdata.hpp"
#include "tests/support/run.hpp"

namespace fs = std::filesystem;
using proflint::LoadOptions;
using proflint::Store;

namespace {

int64_t scalar(Store& store, const std::string& sql) {
  SQLite::Statement q(store.db(), sql);
  if (!q.executeStep() || q.getColumn(0).isNull()) return INT64_MIN;
  return q.getColumn(0).getInt64();
}

std::string text(Store& store, const std::string& sql) {
  SQLite::Statement q(store.db(), sql);
  if (!q.executeStep() || q.getColumn(0).isNull()) return "<null>";
  return q.getColumn(0).getString();
}

Store load(const std::vector<std::string>& paths, const std::string& job_by = "auto") {
  LoadOptions o;
  o.derive.job_by = job_by;
  return proflint::load_inputs(paths, o);
}

std::string fixture(const std::string& name) { return proflint::testing::fixture_path(name).string(); }

// A rank of a CPU-only gloo DDP job (Kineto JSON, µs): 4 steps of 100 ms; in each, the main
// thread spends `compute_ms` computing, then calls c10d::allreduce_ (which records the args);
// the gloo worker thread runs gloo:all_reduce from then until the common end at +95 ms (true
// time). The rank's clock reads true time + `clock_ms`.
std::string gloo_rank(int rank, double compute_ms, double clock_ms) {
  std::string ev;
  auto add = [&](const std::string& e) { ev += (ev.empty() ? "" : ",\n") + e; };
  double base = 1'700'000'000'000'000.0 + clock_ms * 1000;  // µs
  for (int s = 0; s < 4; ++s) {
    double t0 = base + s * 100'000.0;
    add(R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#)" + std::to_string(10 + s) + R"(","pid":7,"tid":1,"ts":)" +
        std::to_string(t0) + R"(,"dur":99000})");
    add(R"({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":7,"tid":1,"ts":)" + std::to_string(t0 + 100) +
        R"(,"dur":)" + std::to_string(compute_ms * 1000) + "}");
    double call = t0 + 200 + compute_ms * 1000;
    add(R"({"ph":"X","cat":"cpu_op","name":"c10d::allreduce_","pid":7,"tid":1,"ts":)" + std::to_string(call) +
        R"(,"dur":50})");
    add(R"({"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":7,"tid":1,"ts":)" + std::to_string(call + 5) +
        R"(,"dur":40,"args":{"Collective name":"allreduce","dtype":"Float","In msg nelems":1000,"Out msg nelems":1000,)"
        R"("Group size":2,"Process Group Name":"0","Process Group Description":"default_pg","Process Group Ranks":"[0, 1]"}})");
    add(R"({"ph":"X","cat":"user_annotation","name":"gloo:all_reduce","pid":7,"tid":2,"ts":)" + std::to_string(call + 60) +
        R"(,"dur":)" + std::to_string(t0 + 95'000 - (call + 60)) + R"(,"args":{"Input Dims":[[1000]],"Input type":["float"]}})");
  }
  return R"({"schemaVersion":1,"distributedInfo":{"backend":"gloo","rank":)" + std::to_string(rank) +
         R"(,"world_size":2},"traceEvents":[)" + ev + "]}";
}

class TempDir {
 public:
  TempDir() : dir_(fs::path(::testing::TempDir()) / ("proflint_jobs_" + std::to_string(getpid()))) {
    fs::create_directories(dir_);
  }
  ~TempDir() { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& content) {
    auto p = dir_ / name;
    std::ofstream(p) << content;
    return p.string();
  }

 private:
  fs::path dir_;
};

}  // namespace

TEST(JobsStore, ImporterKeepsCollectiveArguments) {
  // fixtures/ddp2_rank0: 9 record_param_comms with args (checked with python3 on the raw JSON:
  // In msg nelems 1024000 / 7739368 / 3963456, dtype Float, Process Group Name '0').
  Store store = load({fixture("ddp2_rank0.json.gz")});
  EXPECT_EQ(scalar(store, "SELECT COUNT(*) FROM collective_arg"), 9);
  EXPECT_EQ(scalar(store, "SELECT COUNT(*) FROM collective_arg a JOIN range r ON r.id = a.range_id "
                          "WHERE r.name = 'record_param_comms'"),
            9);
  EXPECT_EQ(scalar(store, "SELECT COUNT(DISTINCT in_nelems) FROM collective_arg"), 3);
  EXPECT_EQ(text(store, "SELECT group_concat(DISTINCT process_group || '/' || dtype || '/' || group_size || '/' || "
                        "collective_name || '/' || group_ranks) FROM collective_arg"),
            "0/Float/2/allreduce/[0, 1]");
  // One trace alone is a job of one rank.
  EXPECT_EQ(text(store, "SELECT source || ' ' || ranks_present || ' ' || aligned FROM job"), "single 1 0");
}

TEST(JobsStore, UnsynchronisedGeneratedRanksAreRefused) {
  // ddp2_rank0 + ddp2_rank1_slow30 share distributedInfo (nccl, world 2, ranks 0 and 1), so they
  // are one job. But they were generated independently: rank 0's steps take 15.4 ms, rank 1's
  // 20.0 ms (python3 on the ProfilerStep events), so their all-reduces never end together and
  // any clock offset would be invented. Alignment is refused, with the reason stored.
  Store store = load({fixture("ddp2_rank0.json.gz"), fixture("ddp2_rank1_slow30.json.gz")});
  EXPECT_EQ(scalar(store, "SELECT COUNT(*) FROM job"), 1);
  EXPECT_EQ(text(store, "SELECT source || ' ' || world_size || ' ' || ranks_present || ' ' || aligned FROM job"),
            "distributed_info 2 2 0");
  EXPECT_NE(text(store, "SELECT alignment_note FROM job").find("end together"), std::string::npos);
  // Not an import issue: the importer lost nothing (the import-issues detector would advise a re-export).
  EXPECT_EQ(scalar(store, "SELECT COUNT(*) FROM import_issue"), 0);
  EXPECT_EQ(scalar(store, "SELECT COUNT(*) FROM collective_instance"), 0);
  EXPECT_EQ(scalar(store, "SELECT COUNT(*) FROM job_rank WHERE clock_offset_ns = 0"), 2);
  // Rank 0's kernels ran on device 0, rank 1's on device 1 (python3: args.device of the kernels).
  EXPECT_EQ(text(store, "SELECT group_concat(rank || ':' || device_id, ' ') FROM job_rank"), "0:0 1:1");
  EXPECT_TRUE(proflint::summarize_jobs(store).front().collectives.empty());
}

TEST(JobsStore, JobByOverridesRecognition) {
  std::vector<std::string> both{fixture("ddp2_rank0.json.gz"), fixture("ddp2_rank1_slow30.json.gz")};
  Store none = load(both, "none");
  EXPECT_EQ(text(none, "SELECT group_concat(source || ranks_present, ',') FROM job"), "single1,single1");
  // Two traces without distributedInfo: alone under auto, one job under given (ranks in order).
  Store apart = load({fixture("sample_train.json.gz"), fixture("sample_amp.json.gz")});
  EXPECT_EQ(scalar(apart, "SELECT COUNT(*) FROM job"), 2);
  Store given = load({fixture("sample_train.json.gz"), fixture("sample_amp.json.gz")}, "given");
  EXPECT_EQ(text(given, "SELECT source || ' ' || ranks_present FROM job"), "given_together 2");
  EXPECT_EQ(text(given, "SELECT group_concat(rank || ':' || trace_id, ' ') FROM job_rank"), "0:1 1:2");
  EXPECT_THROW(load({fixture("sample_train.json.gz")}, "sometimes"), proflint::Error);
}

TEST(JobsStore, OneNsysExportPerRankIsOneJobNamedByTheLauncherEnvironment) {
  // fixtures/jobs/nsys_per_rank (scripts/genprof/make_job_fixtures.sh): a 2-rank export split per
  // process; SLURM_PROCID/SLURM_NTASKS in each process's recorded environment; rank 1's clock is
  // moved by +1.5 s. Given in reverse order, the ranks still come from the environment.
  std::vector<std::string> paths{fixture("jobs/nsys_per_rank/rank1.sqlite"), fixture("jobs/nsys_per_rank/rank0.sqlite")};
  Store store = load(paths);
  EXPECT_EQ(text(store, "SELECT source || ' ' || ranks_present || ' ' || aligned FROM job"), "nsys_environment 2 1");
  EXPECT_EQ(text(store, "SELECT group_concat(rank || ':' || trace_id, ' ') FROM job_rank"), "0:2 1:1");
  EXPECT_EQ(scalar(store, "SELECT COUNT(*) FROM job_rank WHERE pid IS NULL"), 0);
  // The offset puts rank 1's timestamps back on rank 0's clock: -1.5 s, within the residual.
  int64_t offset = scalar(store, "SELECT clock_offset_ns FROM job_rank WHERE rank = 1");
  EXPECT_LT(std::llabs(offset + 1'500'000'000), 100'000) << offset;
  EXPECT_EQ(scalar(store, "SELECT rank FROM trace WHERE trace_id = 1"), 1);
  EXPECT_EQ(scalar(store, "SELECT world_size FROM trace WHERE trace_id = 1"), 2);
  // Under --job-by none each export stays a job of its own.
  Store none = load(paths, "none");
  EXPECT_EQ(text(none, "SELECT group_concat(source || ranks_present, ',') FROM job"), "single1,single1");
  // Only the launcher's integers are read from the environment: the planted secret reaches no output.
  for (const std::string& args : {std::string("summary --format json"), std::string("analyze --format json"),
                                  std::string("analyze"), std::string("summary")}) {
    auto r = proflint::testing::run_proflint(args + " " + paths[0] + " " + paths[1]);
    EXPECT_EQ(r.exit_code, 0) << args << r.err;
    EXPECT_EQ(r.out.find("do-not-print"), std::string::npos) << args;
    EXPECT_EQ(r.err.find("do-not-print"), std::string::npos) << args;
  }
  auto r = proflint::testing::run_proflint("summary " + paths[0] + " " + paths[1]);
  EXPECT_NE(r.out.find("recognised   one nsys export per rank, ranks from the launcher's environment"), std::string::npos) << r.out;
}

TEST(JobsStore, TwoRunsOfRankZeroStayApart) {
  Store store = load({fixture("ddp2_rank0.json.gz"), fixture("ddp2_rank0.json.gz")});
  EXPECT_EQ(text(store, "SELECT group_concat(source || ranks_present, ',') FROM job"), "single1,single1");
}

TEST(JobsStore, GlooJobWithoutGpuIsAlignedOnHostCollectives) {
  // Rank 1 computes 30 ms per step, rank 0 10 ms; rank 1's clock runs 50 ms ahead. The gloo
  // collectives are CPU ops on a worker thread; their ends (+95 ms) are simultaneous.
  TempDir dir;
  std::string r0 = dir.write("rank0.json", gloo_rank(0, 10, 0));
  std::string r1 = dir.write("rank1.json", gloo_rank(1, 30, 50));
  Store store = load({r0, r1});
  ASSERT_EQ(text(store, "SELECT source || ' ' || aligned FROM job"), "distributed_info 1")
      << text(store, "SELECT alignment_note FROM job");
  EXPECT_EQ(scalar(store, "SELECT clock_offset_ns FROM job_rank WHERE rank = 1"), -50'000'000);
  EXPECT_EQ(scalar(store, "SELECT offset_residual_ns FROM job_rank WHERE rank = 1"), 0);
  EXPECT_EQ(scalar(store, "SELECT COUNT(*) FROM collective_instance"), 4);
  // The args recorded on the main thread reached the gloo calls: group '0', 1000 floats.
  EXPECT_EQ(text(store, "SELECT group_concat(DISTINCT type || ' ' || process_group || ' ' || bytes) FROM collective_instance"),
            "all_reduce 0 4000");
  EXPECT_EQ(scalar(store, "SELECT COUNT(*) FROM collective_instance WHERE last_rank = 1 AND first_rank = 0"), 4);
  // Rank 0 arrives 20 ms earlier each step (its compute is 20 ms shorter): 4 x 20 ms of waiting.
  EXPECT_EQ(scalar(store, "SELECT total_wait_ns FROM collective_rank_summary WHERE rank = 0"), 80'000'000);
  EXPECT_EQ(scalar(store, "SELECT total_wait_ns FROM collective_rank_summary WHERE rank = 1"), 0);
  EXPECT_EQ(scalar(store, "SELECT arrived_last FROM collective_rank_summary WHERE rank = 1"), 4);
  EXPECT_EQ(scalar(store, "SELECT COUNT(*) FROM collective_participation WHERE op_id IS NOT NULL AND kernel_id IS NULL "
                          "AND iteration IS NOT NULL"),
            8);
  auto jobs = proflint::summarize_jobs(store);
  ASSERT_EQ(jobs.size(), 1u);
  ASSERT_TRUE(jobs[0].job_efficiency.has_value());
  // Useful (host time outside collectives) is larger on rank 1: load balance < 1; the efficiency
  // product holds.
  const auto& e = *jobs[0].job_efficiency;
  EXPECT_EQ(e.most_loaded_rank, 1);
  EXPECT_LT(e.load_balance, 0.9);
  EXPECT_NEAR(e.parallel, e.load_balance * e.communication * e.orchestration, 1e-9);
  EXPECT_EQ(jobs[0].step_efficiency.size(), 4u);
  EXPECT_GT(e.mean_wait_share, 0.05);
  // The `collectives` report: one row per rank (straggler first), the job row then one per step.
  proflint::dlprof::ReportInput in{&store, nullptr, nullptr};
  auto report = proflint::dlprof::build_report("collectives", in, "");
  ASSERT_EQ(report.tables.size(), 2u);
  ASSERT_EQ(report.tables[0].rows.size(), 2u);
  EXPECT_EQ(std::get<std::string>(report.tables[0].rows[0][0]), "job 1 rank 1");  // the straggler first
  EXPECT_EQ(std::get<int64_t>(report.tables[0].rows[1][4]), 80'000'000);          // rank 0's total wait
  ASSERT_EQ(report.tables[1].rows.size(), 5u);
  EXPECT_EQ(std::get<std::string>(report.tables[1].rows[0][0]), "job 1");
  EXPECT_EQ(std::get<std::string>(report.tables[1].rows[0][2]), "job");
  EXPECT_EQ(std::get<int64_t>(report.tables[1].rows[1][2]), 10);  // ProfilerStep#10
  // Summary JSON carries the job; text names the straggler row first.
  std::string json = proflint::render_summary_json({}, jobs);
  EXPECT_NE(json.find("\"collectives_per_rank\""), std::string::npos);
  EXPECT_NE(json.find("\"parallel_efficiency\""), std::string::npos);
  std::string text_out = proflint::render_summary_text({}, false, jobs);
  EXPECT_NE(text_out.find("Job 1: 2 ranks of world size 2"), std::string::npos) << text_out;
  EXPECT_NE(text_out.find("clocks       aligned on 4 matched collectives"), std::string::npos) << text_out;
}

TEST(JobsStore, RealTwoRanksOfOneJob) {
  // hta_sampled_rank-0/1: two ranks of a 128-rank NCCL job, events sampled (each rank lost some
  // collectives). Checked by hand with python3 on the raw traces: of the 10 nccl:* ranges per
  // rank, 5 pairs end within 0.4 ms of each other (end differences 0, +55, -332, -8, +189 µs:
  // median 0 = the offset, median |residual| 55 µs); in all 5 rank 1 arrives last, rank 0 waits
  // 31,865 µs in total and rank 1 none; time in those collectives 216,808 µs (rank 0) and
  // 185,039 µs (rank 1).
  REALDATA_OR_SKIP(r0, "kineto/hta_sampled_rank-0.json.gz");
  REALDATA_OR_SKIP(r1, "kineto/hta_sampled_rank-1.json.gz");
  Store store = load({r0, r1});
  ASSERT_EQ(text(store, "SELECT source || ' ' || world_size || ' ' || ranks_present || ' ' || aligned FROM job"),
            "distributed_info 128 2 1")
      << text(store, "SELECT alignment_note FROM job");
  EXPECT_EQ(scalar(store, "SELECT clock_offset_ns FROM job_rank WHERE rank = 1"), 0);
  EXPECT_EQ(scalar(store, "SELECT offset_residual_ns FROM job_rank WHERE rank = 1"), 55'000);
  EXPECT_EQ(scalar(store, "SELECT residual_ns FROM job"), 55'000);
  EXPECT_EQ(scalar(store, "SELECT COUNT(*) FROM collective_instance"), 5);
  EXPECT_EQ(scalar(store, "SELECT COUNT(*) FROM collective_instance WHERE last_rank = 1"), 5);
  EXPECT_EQ(scalar(store, "SELECT total_wait_ns FROM collective_rank_summary WHERE rank = 0"), 31'865'000);
  EXPECT_EQ(scalar(store, "SELECT total_wait_ns FROM collective_rank_summary WHERE rank = 1"), 0);
  EXPECT_EQ(scalar(store, "SELECT total_collective_ns FROM collective_rank_summary WHERE rank = 0"), 216'808'000);
  EXPECT_EQ(scalar(store, "SELECT total_collective_ns FROM collective_rank_summary WHERE rank = 1"), 185'039'000);
  // NCCL: every participation is a kernel on the GPU.
  EXPECT_EQ(scalar(store, "SELECT COUNT(*) FROM collective_participation WHERE kernel_id IS NULL"), 0);
  auto jobs = proflint::summarize_jobs(store);
  ASSERT_EQ(jobs.size(), 1u);
  ASSERT_FALSE(jobs[0].collectives.empty());
  EXPECT_EQ(jobs[0].collectives.front().rank, 1);  // the straggler is listed first
  EXPECT_DOUBLE_EQ(jobs[0].collectives.front().arrived_last_share, 1.0);
  EXPECT_EQ(jobs[0].step_efficiency.size(), 2u);  // ProfilerStep#551 and #552 on both ranks
}

TEST(JobsStore, LuaRuleReadsTheCollectiveTables) {
  // The example rule of docs/lua-api.md ("Jobs and collectives in SQL"), on the gloo job above:
  // it runs once for the job (need "job"), not once per rank, and reads the job tables.
  TempDir dir;
  std::string r0 = dir.write("rank0.json", gloo_rank(0, 10, 0));
  std::string r1 = dir.write("rank1.json", gloo_rank(1, 30, 50));
  Store store = load({r0, r1});
  std::string rule = R"(return {
  id = "slowest-rank", title = "One rank keeps the others waiting",
  needs = { "job", "collectives" },
  evaluate = function(ctx)
    local job = ctx:query([[SELECT job_id FROM job_rank WHERE trace_id = ?]], ctx.trace_id)[1]
    local rows = ctx:query([[
      SELECT rank, arrived_last, instances, total_wait_ns FROM collective_rank_summary
      WHERE job_id = ? ORDER BY arrived_last DESC, total_wait_ns LIMIT 1]], job.job_id)
    local others = ctx:query([[
      SELECT SUM(wait_ns) AS wait FROM collective_participation
      WHERE job_id = ? AND rank <> ?]], job.job_id, rows[1].rank)[1]
    ctx:report{
      problem = string.format("Rank %d arrived last at %d of %d collectives; the others waited %s.",
                              rows[1].rank, rows[1].arrived_last, rows[1].instances,
                              proflint.format_ns(others.wait or 0)),
      evidence = { rank = rows[1].rank },
    }
  end,
}
)";
  auto result = proflint::testing::run_rules(store, {proflint::testing::rule("slowest.lua", rule)});
  auto found = proflint::testing::with_id(result, "slowest-rank");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].problem, "Rank 1 arrived last at 4 of 4 collectives; the others waited 80.0 ms.");
  // On one trace the job has a single rank: "collectives" is missing and the rule is skipped.
  Store single = load({r0});
  auto alone = proflint::testing::run_rules(single, {proflint::testing::rule("slowest.lua", rule)});
  EXPECT_TRUE(proflint::testing::with_id(alone, "slowest-rank").empty());
}

// Jobs are derived from the fact models alone (no store exists yet): the 4 ranks of
// fixtures/jobs/ddp4_compute_r2, each imported into its own model and derived, give the job its
// truth.json describes. truth.json was written by the generator that laid down the events: 12
// collectives, rank 2 late by 6 ms per step so it arrives last at all 12, and the clock offsets
// (rank 0's clock minus rank r's); offsets are checked to 1 % of the median step, as
// rank_straggler_test does. Ops and kernels are named by position in their rank's model: each
// must be a collective host op and a communication kernel of that model.
TEST(JobsModel, FourRanksFromTheirModelsAlone) {
  const fs::path dir = proflint::testing::fixture_path("jobs/ddp4_compute_r2");
  nlohmann::json truth = nlohmann::json::parse(std::ifstream(dir / "truth.json"));
  std::vector<proflint::TraceModel> models(4);
  std::vector<const proflint::TraceModel*> all;
  for (int r = 0; r < 4; ++r) {
    proflint::import_file((dir / ("rank" + std::to_string(r) + ".json.gz")).string(), models[r], {});
    proflint::derive_trace(models[r], {});
    all.push_back(&models[r]);
  }
  proflint::JobFacts facts = proflint::derive_jobs(all, {});
  ASSERT_EQ(facts.jobs.size(), 1u);
  const proflint::JobFact& job = facts.jobs[0];
  EXPECT_EQ(job.source, "distributed_info");
  EXPECT_EQ(job.ranks_present, 4);
  EXPECT_TRUE(job.aligned);
  ASSERT_EQ(job.ranks.size(), 4u);
  const double tolerance = 0.01 * truth["median_step_ns"].get<double>();
  for (size_t r = 0; r < 4; ++r) {
    EXPECT_EQ(job.ranks[r].rank, static_cast<int64_t>(r));
    EXPECT_EQ(job.ranks[r].trace, r);  // the files' order: rank r is the r-th model
    EXPECT_NEAR(static_cast<double>(job.ranks[r].clock_offset_ns), truth["clock_offset_ns"][r].get<double>(), tolerance);
  }
  EXPECT_EQ(job.instances.size(), truth["collectives"].get<size_t>());
  std::vector<int64_t> last(4, 0);
  for (const auto& inst : job.instances) ++last[static_cast<size_t>(inst.last_rank)];
  EXPECT_EQ(last, truth["arrived_last"].get<std::vector<int64_t>>());
  ASSERT_EQ(job.participations.size(), 4 * job.instances.size());
  std::set<std::string> op_names;
  for (const auto& p : job.participations) {
    const proflint::TraceModel& m = models[p.trace];
    EXPECT_EQ(p.trace, static_cast<size_t>(p.rank));
    ASSERT_GE(p.kernel, 0);
    ASSERT_LT(static_cast<size_t>(p.kernel), m.kernels.size());
    EXPECT_EQ(m.derived.kernels[static_cast<size_t>(p.kernel)].category_text(), "communication");
    ASSERT_GE(p.op, 0);
    ASSERT_LT(static_cast<size_t>(p.op), m.derived.ops.size());
    op_names.insert(m.strings.text(m.derived.ops[static_cast<size_t>(p.op)].name_id));
  }
  for (const auto& name : op_names) EXPECT_TRUE(name == "record_param_comms" || name.starts_with("nccl:") || name.starts_with("c10d::")) << name;
}

// A saved store keeps the jobs it was saved with; asked to derive again (what --job-by does on
// the command line) it groups its traces under the rule given.
TEST(JobsStore, SavedStoreKeepsItsJobsUnlessDerivedAgain) {
  TempDir dir;
  std::string saved = dir.write("given.db", "");
  fs::remove(saved);
  {
    Store given = load({fixture("sample_train.json.gz"), fixture("sample_amp.json.gz")}, "given");
    given.save_as(saved);
  }
  LoadOptions as_saved;  // no derivation option: the store as it is
  Store kept = proflint::load_inputs({saved}, as_saved);
  EXPECT_EQ(text(kept, "SELECT source || ' ' || ranks_present FROM job"), "given_together 2");
  LoadOptions again;
  again.rederive = true;
  again.derive.job_by = "auto";
  Store regrouped = proflint::load_inputs({saved}, again);
  EXPECT_EQ(text(regrouped, "SELECT group_concat(source || ranks_present, ',') FROM job"), "single1,single1");
  // The re-derived store is the one a fresh load of the profiles under auto writes.
  Store fresh = load({fixture("sample_train.json.gz"), fixture("sample_amp.json.gz")});
  EXPECT_EQ(text(fresh, "SELECT group_concat(source || ranks_present || ':' || trace_id, ',') FROM job JOIN job_rank USING (job_id)"),
            text(regrouped, "SELECT group_concat(source || ranks_present || ':' || trace_id, ',') FROM job JOIN job_rank USING (job_id)"));
}
