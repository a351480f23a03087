// engine/derive/derive.cpp — derive_all: runs the derivation steps on each trace, in order.
//
// Per trace, in one transaction: load -> nest ranges -> classify ranges and kernels -> GPU work to
// API calls -> iterations -> ops -> API calls and GPU work to ops -> iteration assignment -> op
// aggregates -> start-up/steady state and workload -> breakdown -> write. Each step's rules live in its own file (see docs/derivation.md).
#include "engine/derive/derive.hpp"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/common/memory.hpp"
#include "engine/derive/breakdown.hpp"
#include "engine/derive/categories.hpp"
#include "engine/derive/correlation.hpp"
#include "engine/derive/iterations.hpp"
#include "engine/derive/jobs.hpp"
#include "engine/derive/ops.hpp"
#include "engine/derive/startup.hpp"
#include "engine/derive/store_io.hpp"
#include "engine/derive/tensor_cores.hpp"

namespace proflint {

namespace {

// PROFLINT_TIMINGS=1: the time of each derivation step on stderr ("timing derive:STEP MS ms").
class StepClock {
 public:
  void lap(const char* step) {
    static const bool enabled = std::getenv("PROFLINT_TIMINGS") != nullptr;
    if (!enabled) return;
    auto now = std::chrono::steady_clock::now();
    auto mem = resident_memory();  // where in derivation the peak is reached
    std::fprintf(stderr, "timing derive:%s %.3f ms peak-rss %.0f MiB rss %.0f MiB\n", step,
                 std::chrono::duration<double, std::milli>(now - last_).count(), mem.peak_mib, mem.current_mib);
    last_ = now;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// Tensor Core use and category once per distinct kernel name (names repeat millions of times).
void classify_kernels(TraceData& t) {
  struct Verdict {
    bool tensor_core, decided;
    std::string_view category;
  };
  std::unordered_map<int64_t, Verdict> by_name;
  std::span<const TensorCorePattern> extra;
  if (t.options) extra = t.options->extra_tensor_core_patterns;
  for (auto& g : t.gpu) {
    if (g.kind != GpuKind::kernel) continue;
    auto it = by_name.find(g.name_id);
    if (it == by_name.end()) {
      const std::string& name = t.text(g.name_id);
      auto verdict = classify_tensor_core(name, extra);
      it = by_name.emplace(g.name_id, Verdict{verdict.uses_tensor_cores, verdict.decided, kernel_category(name)}).first;
    }
    g.tensor_core = it->second.tensor_core;
    g.tensor_core_decided = it->second.decided;
    g.category = it->second.category;
  }
}

// The C++ passes over one trace's facts, in order; no SQL.
void compute(TraceData& t, std::vector<BreakdownRow>& breakdown) {
  StepClock clock;
  nest_ranges(t);
  classify_ranges(t);
  classify_kernels(t);
  clock.lap("nest_classify");
  correlate_gpu_to_api(t);
  clock.lap("correlate");
  detect_iterations(t);
  clock.lap("iterations");
  build_ops(t);
  clock.lap("ops");
  attribute_api_to_ops(t);
  attribute_gpu_to_ops(t);
  resolve_tensor_cores_by_op(t);  // names the table cannot decide: the launching op's dtypes
  assign_iterations(t);
  aggregate_op_gpu_time(t);
  clock.lap("attribute");
  t.steady = find_startup(t);
  t.workload = classify_workload(t);
  breakdown = compute_breakdown(t);
  clock.lap("breakdown");
}

void derive_trace(Store& store, int64_t trace_id, const DeriveOptions& options) {
  StepClock clock;
  TraceData t = load_trace(store, trace_id);
  t.options = &options;
  clock.lap("load");
  // While the passes run on a second thread, this one builds the indexes on columns derivation
  // never writes (after a fresh import there are none yet; later traces find them built).
  std::vector<BreakdownRow> breakdown;
  std::exception_ptr failed;
  std::thread passes([&] {
    try {
      compute(t, breakdown);
    } catch (...) {
      failed = std::current_exception();
    }
  });
  try {
    store.create_fact_indexes();
  } catch (...) {
    passes.join();
    throw;
  }
  clock.lap("fact_indexes");
  passes.join();
  if (failed) std::rethrow_exception(failed);
  clock.lap("passes_wait");
  SQLite::Transaction tx(store.db());
  clear_derived(store, trace_id);
  write_trace(store, t, breakdown);
  clock.lap("write");
  // The aggregation range travels with the derived facts (schema/0002_reports.sql), so a saved
  // store's readers restrict exactly as this derivation did.
  SQLite::Statement range(store.db(), "UPDATE trace SET iter_start = ?, iter_stop = ? WHERE trace_id = ?");
  if (options.iter_start) range.bind(1, *options.iter_start);
  if (options.iter_stop) range.bind(2, *options.iter_stop);
  range.bind(3, trace_id);
  range.exec();
  tx.commit();
}

}  // namespace

void derive_all(Store& store, const DeriveOptions& options, bool force) {
  StepClock clock;
  // Derivation reads whole tables in table order and writes by row id: it needs no index. After a
  // fresh import none exists yet: those on fact columns are built while the first trace's passes
  // run (derive_trace), those on derived columns once, after the derived columns are written
  // (they would otherwise be updated row by row). A saved store being re-derived has them; those
  // on derived columns are dropped for the same reason.
  store.db().exec(
      "DROP INDEX IF EXISTS kernel_by_op; DROP INDEX IF EXISTS op_by_range; DROP INDEX IF EXISTS op_by_name;");
  std::vector<std::pair<int64_t, std::string>> traces;
  {
    SQLite::Statement q(store.db(),
                        force ? "SELECT trace_id, path FROM trace ORDER BY trace_id"
                              : "SELECT trace_id, path FROM trace WHERE iteration_source IS NULL ORDER BY trace_id");
    while (q.executeStep()) traces.emplace_back(q.getColumn(0).getInt64(), q.getColumn(1).getString());
  }
  for (const auto& [trace_id, path] : traces) {
    try {
      derive_trace(store, trace_id, options);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw input_error(path, "derivation", e.what());
    }
  }
  clock.lap("traces");
  store.create_indexes();
  clock.lap("indexes_after");
  // Jobs span traces and depend on --job-by: rebuilt on every load, saved stores included.
  derive_jobs(store, options);
  clock.lap("jobs");
}

}  // namespace proflint
