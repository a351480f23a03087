// engine/analysis/system_view.hpp — the job seen through its sampling logs (docs/samples.md):
// the Clara GPU profiler's system view. Per GPU: average activity, activity and memory occupancy
// over the job, power, temperature and clocks; the operator and module times of operator logs.
// Computed from the sample view and operator_timing only (never from a file format); the summary,
// the reports and the sample detectors share it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <SQLiteCpp/Database.h>

namespace proflint {

// One metric of one GPU over the samples.
struct SampledStat {
  int64_t samples = 0;
  double mean = 0, min = 0, max = 0;
};

struct SampledGpu {
  int64_t device_id = 0;
  std::string name;              // from the device table; empty when unknown
  int64_t first_ns = 0, last_ns = 0;   // first and last sample of any metric
  std::optional<SampledStat> gpu_active;    // % (utilization.gpu, dmon sm, DCGM GPUTL)
  std::optional<SampledStat> memory_used;   // bytes
  std::optional<double> memory_total_bytes; // memory_total series, else device.memory_bytes
  std::optional<SampledStat> power_draw;    // W
  std::optional<double> power_limit_w;
  std::optional<SampledStat> temperature;   // C
  std::optional<SampledStat> clock_sm;      // MHz (clock_sm, else clock_graphics)
  std::optional<double> clock_sm_max_mhz;   // clock_sm_max / clock_graphics_max
  // The job cut into kProfileSlices equal slices (first to last sample of the trace's series):
  // mean GPU activity (%) and memory occupancy (% of memory_total) per slice; NaN where no sample.
  std::vector<double> activity_profile, memory_profile;
};

struct OperatorTime {
  std::string operator_name, module;  // module empty: the operator's total
  int64_t time_ns = 0, count = 0;
};

struct SystemView {
  std::vector<std::string> sources;   // "path (format)" of each sampling log
  int64_t start_ns = 0, end_ns = 0;   // first and last sample of every series
  std::vector<SampledGpu> gpus;       // GPUs with samples, by device_id
  std::vector<std::string> metrics;   // every metric sampled, sorted
  std::vector<OperatorTime> operators;
  bool empty() const { return sources.empty() && operators.empty(); }
};

inline constexpr int kProfileSlices = 24;

// The system view of one trace (empty when it has no samples nor operator timings).
SystemView summarize_samples(SQLite::Database& db, int64_t trace_id);

// A GPU's samples of one metric in time order: (ts_ns, value).
std::vector<std::pair<int64_t, double>> sample_values(SQLite::Database& db, int64_t trace_id, int64_t device_id,
                                                      const std::string& metric);

// The time each sample stands for: until the next one, at most twice the usual (median) interval,
// so a logger that stopped does not make its last sample last for minutes; the last sample gets
// the usual interval. Empty for fewer than two samples.
std::vector<int64_t> sample_spans(const std::vector<std::pair<int64_t, double>>& samples);

}  // namespace proflint
