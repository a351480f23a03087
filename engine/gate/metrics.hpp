// engine/gate/metrics.hpp — what `proflint compare` measures on each side.
//
// A side is one or more traces (repeated runs or the ranks of one job) loaded into one store and
// derived. Metrics come from derived facts only, like detectors: the gate never sees a format.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/finding.hpp"
#include "engine/analysis/summary.hpp"
#include "engine/store/store.hpp"

namespace proflint::gate {

enum class Polarity { lower_is_better, higher_is_better };
enum class Unit { ns, share, bytes, rate };  // rate: samples per second (throughput)

std::string_view unit_name(Unit u);          // 'ns', 'share', 'bytes', 'samples_per_s'
std::string_view polarity_name(Polarity p);  // 'lower_is_better', 'higher_is_better'

struct Metric {
  std::string name;   // 'iteration_time', 'breakdown.dataloader', 'op_type.conv2d', ...
  std::string scope;  // '' for the whole job, else 'GPU 0' or 'rank 1 GPU 0'
  Unit unit = Unit::ns;
  Polarity polarity = Polarity::lower_is_better;
  bool per_iteration = false;   // one value per iteration in `samples` (else one value for the capture)
  double value = 0;             // the median of `samples` when there are samples, else the value
  // Per-iteration metrics: one value per kept iteration (0 where the component did not occur);
  // kernel_launch.*: one duration per launch (sides without iterations).
  std::vector<double> samples;
  std::vector<double> run_values;  // per-iteration metrics: the median of each run (trace) on its own
};

// What must match before two sides can be compared.
struct Fingerprint {
  std::vector<int64_t> gpu_counts;                        // per trace: GPUs with activity; sorted, unique
  std::vector<std::string> gpu_setups;                    // per trace: "2 x NVIDIA A100-SXM4-80GB"; sorted, unique
  std::vector<std::string> formats, frameworks, vendors;  // sorted, unique, recorded values only
  double iterations_per_trace = 0;                        // mean iterations kept per trace
  std::optional<int64_t> batch;                           // most common leading dimension of forward ops' first input
  std::vector<int64_t> ranks;                             // sorted ranks, when recorded
};

struct ExtractOptions {
  std::string warmup = "auto";    // 'auto' or a count of leading iterations to drop per trace
  double warmup_tolerance = 0.2;  // auto: a leading iteration above (1 + this) x median is warm-up
  bool user_range = false;        // --iter-start/--iter-stop given: never drop iterations
  int64_t top = 10;               // op types and kernels kept, by GPU time
  // Which of a trace's iterations (after --iter-start/--iter-stop, before warm-up) to keep, by
  // position among them: lets tests split one capture into two sides (halves, odd/even steps).
  std::function<bool(size_t index, size_t count)> keep_step;
  size_t max_launch_samples = 2000;  // per kernel, when a trace has no iterations
};

struct Side {
  std::vector<std::string> paths;
  std::vector<TraceSummary> summaries;
  std::vector<Metric> metrics;
  Fingerprint fingerprint;
  std::vector<std::string> notes;  // warm-up dropped, how ranks were combined ...
  bool combined_ranks = false;     // iteration time is the slowest rank per step
  size_t runs = 0;                 // independent runs: traces, or 1 when the traces are ranks of one job
};

// Reads the metrics of every trace in `store` (derived, restricted to the aggregation range) and
// combines them into one side: traces of distinct ranks form one job (the step takes as long as
// its slowest rank); otherwise traces are repeated runs and their iterations are pooled.
Side extract_side(Store& store, const ExtractOptions& options);

// Leading dimension of the first input in an 'Input Dims' text like "[[32,3,224,224],[64,3,7,7]]";
// nullopt when the first input is a scalar or absent.
std::optional<int64_t> leading_dimension(std::string_view input_dims);

// Leading iterations to drop as warm-up: while an iteration is longer than (1 + tolerance) x the
// median of all, at most half of them.
size_t warmup_count(const std::vector<int64_t>& durations_ns, double tolerance);

}  // namespace proflint::gate
