// detectors/allocation_churn.cpp — allocation-churn
// Flags device (and pinned host) memory allocated and freed over and over in the steady state:
// every cudaMalloc/cudaFree (hipMalloc/hipFree, cuMemAlloc/cuMemFree) is a driver call of tens of
// µs to ms, and cudaFree synchronizes the device, so a loop that allocates its buffers each pass
// leaves the GPU waiting. The fix is to allocate once (or let a pool keep the memory).
// Docs: docs/detectors/allocation-churn.md
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/idle_claims.hpp"
#include "engine/analysis/source_sites.hpp"
#include "engine/common/format.hpp"
#include "engine/common/intervals.hpp"

namespace proflint {

namespace {

// Allocation and release calls of the CUDA runtime and driver and of HIP (names as stored, with the
// CUPTI _vNNNN suffix already removed by the importers). Stream-ordered allocation
// (cudaMallocAsync/cudaFreeAsync) is the fix, so it is not counted.
constexpr const char* kAllocationCalls =
    "'cudaMalloc', 'cudaFree', 'cudaMallocPitch', 'cudaMalloc3D', 'cudaMallocManaged', 'cudaMallocHost', "
    "'cudaFreeHost', 'cudaHostAlloc', 'cudaMallocArray', 'cudaFreeArray', 'cuMemAlloc', 'cuMemAlloc_v2', 'cuMemFree', "
    "'cuMemFree_v2', 'cuMemAllocHost', 'cuMemAllocHost_v2', 'cuMemFreeHost', 'cuMemAllocManaged', 'cuMemAllocPitch', "
    "'cuMemAllocPitch_v2', 'hipMalloc', 'hipFree', 'hipMallocManaged', 'hipHostMalloc', 'hipHostFree', "
    "'hipMallocPitch', 'hipExtMallocWithFlags', 'hipMallocHost', 'hipFreeHost'";

class AllocationChurn final : public Detector {
 public:
  explicit AllocationChurn(const OptionValues& o)
      : min_calls_(o.integer("min_calls")),
        min_share_(o.number("min_share")),
        recoverable_(o.number("recoverable_fraction")) {}

  std::string_view id() const override { return "allocation-churn"; }
  std::string_view title() const override { return "Memory allocated and freed repeatedly"; }
  std::vector<std::string> needs() const override { return {"api_calls", "gpu_activity"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* s = facts.summary(trace_id);
    if (!s || s->steady_wall_ns <= 0) return;
    auto& db = facts.db();
    // Steady state of the trace: after the earliest device's start-up (context creation makes the
    // first allocation slow once; that is not churn).
    int64_t steady_start = INT64_MIN;
    bool first = true;
    for (const auto& d : s->devices) {
      steady_start = first ? d.steady_start_ns : std::min(steady_start, d.steady_start_ns);
      first = false;
    }
    struct Call {
      Interval iv;
      int64_t name_id;
      int64_t id;  // api_call.id
    };
    std::vector<Call> calls;
    std::map<std::string, std::pair<int64_t, int64_t>> by_name;  // name -> (count, ns)
    int64_t longest = 0, longest_id = -1;
    std::string longest_name;
    {
      SQLite::Statement q(db, std::string("SELECT a.id, a.start_ns, a.start_ns + a.dur_ns, a.name_id, s.value FROM "
                                          "_api_call a JOIN string s ON s.id = a.name_id WHERE a.trace_id = ? AND "
                                          "a.start_ns >= ? AND s.value IN (") +
                                  kAllocationCalls + ") ORDER BY a.start_ns, a.id");
      q.bind(1, trace_id);
      q.bind(2, steady_start);
      while (q.executeStep()) {
        Interval iv{q.getColumn(1).getInt64(), q.getColumn(2).getInt64()};
        calls.push_back({iv, q.getColumn(3).getInt64(), q.getColumn(0).getInt64()});
        auto& n = by_name[q.getColumn(4).getString()];
        ++n.first;
        n.second += iv.length();
        if (iv.length() > longest) {
          longest = iv.length();
          longest_id = q.getColumn(0).getInt64();
          longest_name = q.getColumn(4).getString();
        }
      }
    }
    int64_t count = static_cast<int64_t>(calls.size());
    if (count < min_calls_) {
      sink.below_threshold(checked_below(*this, trace_id, std::nullopt, "allocation/release calls after start-up",
                                         static_cast<double>(count), static_cast<double>(min_calls_), "count"));
      return;
    }
    std::vector<Interval> alloc;
    int64_t summed = 0;
    for (const auto& c : calls) {
      alloc.push_back(c.iv);
      summed += c.iv.length();
    }
    alloc = union_intervals(std::move(alloc));
    int64_t host_time = total_length(alloc);
    if (static_cast<double>(host_time) < min_share_ * static_cast<double>(s->steady_wall_ns)) {
      sink.below_threshold(checked_below(*this, trace_id, std::nullopt, "host time in allocation/release calls",
                                         static_cast<double>(host_time) / static_cast<double>(s->steady_wall_ns),
                                         min_share_, "share of the steady state"));
      return;
    }
    // The part of that time in which no GPU of the trace was busy: the GPU waited on the allocator.
    std::vector<Interval> busy;
    {
      SQLite::Statement q(db,
                          "SELECT start_ns, start_ns + dur_ns FROM _kernel WHERE trace_id = ?1 AND start_ns + dur_ns > ?2 "
                          "UNION ALL SELECT start_ns, start_ns + dur_ns FROM _memcpy WHERE trace_id = ?1 AND "
                          "start_ns + dur_ns > ?2 UNION ALL SELECT start_ns, start_ns + dur_ns FROM _memset WHERE "
                          "trace_id = ?1 AND start_ns + dur_ns > ?2");
      q.bind(1, trace_id);
      q.bind(2, steady_start);
      while (q.executeStep()) busy.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64()});
    }
    busy = union_intervals(std::move(busy));
    int64_t overlapped = total_length(intersect_intervals(alloc, busy));
    int64_t exposed = host_time - overlapped;

    // Where the calls come from: the innermost annotation/NVTX range around most of the time.
    std::string where;
    {
      SQLite::Statement q(db, std::string("SELECT (SELECT s2.value FROM _range r JOIN string s2 ON s2.id = r.name_id "
                                          "WHERE r.trace_id = a.trace_id AND r.pid IS a.pid AND r.tid IS a.tid AND "
                                          "r.kind IN ('user_annotation', 'nvtx', 'python_function') AND r.start_ns <= "
                                          "a.start_ns AND r.start_ns + r.dur_ns >= a.start_ns + a.dur_ns AND s2.value "
                                          "NOT LIKE 'ProfilerStep#%' ORDER BY r.start_ns DESC, r.dur_ns LIMIT 1) AS "
                                          "encl, sum(a.dur_ns) FROM _api_call a JOIN string s ON s.id = a.name_id "
                                          "WHERE a.trace_id = ? AND a.start_ns >= ? AND s.value IN (") +
                                  kAllocationCalls + ") GROUP BY encl ORDER BY 2 DESC LIMIT 1");
      q.bind(1, trace_id);
      q.bind(2, steady_start);
      if (q.executeStep() && !q.isColumnNull(0)) where = q.getColumn(0).getString();
    }

    std::string parts;
    std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> names(by_name.begin(), by_name.end());
    std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) {
      return a.second.second > b.second.second || (a.second.second == b.second.second && a.first < b.first);
    });
    for (const auto& [name, cn] : names)
      parts += fmt::format("{}{} {} ({})", parts.empty() ? "" : ", ", cn.first, name, format_ns(cn.second));
    const double base = static_cast<double>(s->steady_wall_ns);
    Finding f = make_finding(FindingScope::of_trace(trace_id).of_rank(s->rank));
    f.problem = fmt::format(
        "{} allocation and release calls after start-up keep the host busy {} ({} of the {}): {}. The longest is "
        "one {} of {}.{} For {} of that time no GPU work was running: the GPU waited on the allocator.",
        count, format_ns(host_time), format_percent(static_cast<double>(host_time) / base),
        s->startup_ns > 0 ? "steady state" : "capture window", parts, longest_name, format_ns(longest),
        where.empty() ? "" : fmt::format(" Most of the time is inside `{}`.", where), format_ns(exposed));
    const std::string workload = s->workload.value_or("");
    if (workload == "training" || workload == "inference") {
      f.recommendation =
          "Let the framework's caching allocator keep memory instead of returning it to the driver: no "
          "`torch.cuda.empty_cache()` (or `gc.collect()` followed by it) inside the loop, no "
          "`PYTORCH_NO_CUDA_MEMORY_CACHING=1`; relieve memory pressure that makes the allocator free and retry (smaller "
          "batch or activation checkpointing, see batch-size); set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` "
          "so growing tensors do not force new segments; allocate buffers of the final size once and reuse them "
          "(`out=` arguments, preallocated tensors).";
    } else {
      f.recommendation =
          "Allocate once and reuse: hoist cudaMalloc/cudaFree (hipMalloc/hipFree) out of the loop and keep buffers of "
          "the largest size needed, or use a memory pool — stream-ordered allocation with cudaMallocAsync/"
          "cudaFreeAsync (hipMallocAsync/hipFreeAsync) on a pool whose release threshold keeps freed memory "
          "(`cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, …)`), or the library's pool: RAPIDS RMM "
          "`rmm.reinitialize(pool_allocator=True)`, CuPy's default memory pool (do not call `free_all_blocks()` in the "
          "loop), Numba with an RMM/external memory manager.";
    }
    f.estimated_savings_ns = static_cast<int64_t>(static_cast<double>(exposed) * recoverable_);
    // The GPU-idle time under the calls, per device and gap (engine/analysis/idle_claims.hpp):
    // host-sync (cudaFree synchronizes), gpu-idle-gaps and gpu-underutilized count the same time.
    {
      std::map<std::string, int64_t> by_gap;
      for (const auto& d : s->devices)
        for (const auto& [key, ns] : IdleGapKeys(facts, trace_id, d.device_id).idle_by_gap(alloc)) by_gap[key] += ns;
      add_idle_claims(f.claims, by_gap, f.estimated_savings_ns);
    }
    f.savings_method = fmt::format(
        "time in allocation/release calls during which no GPU work ran, x {:.2f} (recoverable_fraction: a pool or "
        "preallocation removes nearly all of it)",
        recoverable_);
    f.confidence = 0.7;
    f.evidence["calls"] = count;
    f.evidence["host_time_ns"] = host_time;
    f.evidence["summed_call_ns"] = summed;
    f.evidence["gpu_idle_during_ns"] = exposed;
    nlohmann::ordered_json bn = nlohmann::ordered_json::object();
    for (const auto& [name, cn] : names) bn[name] = {{"calls", cn.first}, {"time_ns", cn.second}};
    f.evidence["by_name"] = bn;
    f.evidence["longest_api_call_id"] = longest_id;
    if (!where.empty()) f.evidence["enclosing_range"] = where;
    {
      SourceSites sites(facts, trace_id, "in allocation calls");  // where the allocations are made
      for (const auto& c : calls) sites.add_api_call(c.id, c.iv.length());
      attach_locations(f, sites.top(5));
    }
    sink.report(std::move(f));
  }

 private:
  int64_t min_calls_;
  double min_share_;
  double recoverable_;
};

}  // namespace

DetectorInfo allocation_churn_info() {
  return {"allocation-churn",
          {{"min_calls", 20, "report when at least this many allocation/release calls run after start-up"},
           {"min_share", 0.02, "and when they keep the host busy at least this share of the steady state"},
           {"recoverable_fraction", 0.9,
            "share of the GPU-idle time inside those calls that allocating once or pooling recovers"}},
          [](const OptionValues& o) { return std::make_unique<AllocationChurn>(o); }};
}

}  // namespace proflint
