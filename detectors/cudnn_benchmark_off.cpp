// detectors/cudnn_benchmark_off.cpp — cudnn-benchmark-off
// Flags convolution-heavy PyTorch jobs whose profile shows cuDNN picking convolution algorithms by
// heuristics (torch.backends.cudnn.benchmark = False): the first convolutions of the process are in
// the trace, yet no algorithm was timed.
// Docs: docs/detectors/cudnn-benchmark-off.md
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/common/format.hpp"

namespace proflint {

namespace {

// Ops that run a convolution (forward, backward, transposed), by normalized op type.
constexpr const char* kConvOp = "(o.op_type LIKE '%conv%' AND o.op_type NOT LIKE '%convert%')";

// cuDNN's algorithm search (cudnnFind*, the v8 frontend's time_sorted_plan) times every candidate
// with CUDA events; heuristic selection never does.
constexpr const char* kTimingCalls = "('cudaEventElapsedTime', 'cudaEventSynchronize')";

// Calls that only happen the first time a process/thread touches cuDNN or a kernel: cuDNN handle
// creation (its internal streams, device properties) and lazy loading of kernel modules.
constexpr const char* kColdStartCalls =
    "(s.value LIKE 'cudaStreamCreate%' OR s.value = 'cudaGetDeviceProperties' OR s.value LIKE 'cuModuleLoad%' "
    "OR s.value LIKE 'cuLibraryLoad%')";

// cuDNN's generic 'algorithm 0' kernels, what its heuristics fall back on for many FP32 shapes.
bool generic_conv_kernel(const std::string& name) {
  for (const char* s :
       {"implicit_convolve_", "explicit_convolve_", "wgrad_alg0_engine", "dgrad_engine<", "dgrad_engine "})
    if (name.find(s) != std::string::npos) return true;
  return false;
}

class CudnnBenchmarkOff final : public Detector {
 public:
  explicit CudnnBenchmarkOff(const OptionValues& o)
      : min_conv_share_(o.number("min_conv_share")),
        min_conv_kernels_(o.integer("min_conv_kernels")),
        expected_gain_(std::clamp(o.number("expected_gain"), 0.0, 1.0)),
        report_unverified_(o.boolean("report_unverified")),
        min_generic_share_(o.number("min_generic_share")),
        max_shape_growth_(o.number("max_shape_growth")) {}

  std::string_view id() const override { return "cudnn-benchmark-off"; }
  std::string_view title() const override { return "cuDNN autotuning (cudnn.benchmark) is off"; }
  std::vector<std::string> needs() const override { return {"kernels", "ops", "api_calls"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* summary = facts.summary(trace_id);
    if (!summary || summary->wall_ns <= 0) return;
    auto& db = facts.db();
    {
      // cuDNN is NVIDIA's; MIOpen's find mode has other signatures.
      SQLite::Statement q(db, "SELECT vendor FROM trace WHERE trace_id = ?");
      q.bind(1, trace_id);
      if (q.executeStep() && !q.isColumnNull(0) && q.getColumn(0).getString() != "nvidia") return;
    }
    int64_t kernel_time = 0, kernel_busy = 0;
    for (const auto& d : summary->devices) {
      kernel_time += d.kernel_time_ns;
      kernel_busy += d.kernel_busy_ns;
    }
    if (kernel_time <= 0) return;

    // Convolution work: cuDNN convolution kernels.
    int64_t conv_ns = 0, conv_kernels = 0, generic_ns = 0;
    std::vector<std::pair<std::string, int64_t>> conv_names;
    {
      SQLite::Statement q(
          db,
          // Grouped on name ids first: one string lookup per kernel name, not per kernel.
          "SELECT s.value, g.ns, g.n FROM (SELECT name_id, sum(dur_ns) AS ns, count(*) AS n FROM _kernel "
          "WHERE trace_id = ? AND category = 'conv' GROUP BY name_id) g JOIN string s ON s.id = g.name_id "
          "ORDER BY 2 DESC, 1");
      q.bind(1, trace_id);
      while (q.executeStep()) {
        std::string name = q.getColumn(0).getString();
        int64_t ns = q.getColumn(1).getInt64();
        conv_ns += ns;
        conv_kernels += q.getColumn(2).getInt64();
        if (generic_conv_kernel(name)) generic_ns += ns;
        conv_names.emplace_back(std::move(name), ns);
      }
    }
    double conv_share = static_cast<double>(conv_ns) / static_cast<double>(kernel_time);
    // A search pays off only over many calls of the same convolutions.
    if (conv_ns <= 0) return;  // no convolutions: nothing to check
    if (conv_share < min_conv_share_) {
      sink.below_threshold(checked_below(*this, trace_id, std::nullopt, "convolution share of kernel time", conv_share,
                                         min_conv_share_, "share"));
      return;
    }
    if (conv_kernels < min_conv_kernels_) {
      sink.below_threshold(checked_below(*this, trace_id, std::nullopt, "convolution kernels", static_cast<double>(conv_kernels),
                                         static_cast<double>(min_conv_kernels_), "count"));
      return;
    }

    // API names are matched once among the distinct names of the trace's calls; the calls are then
    // picked by name id (a per-row string join and op lookup over every call cost ~100 ms per query).
    std::map<int64_t, std::string> api_names;
    std::set<int64_t> timing_ids, cold_ids;
    std::vector<int64_t> wanted;
    {
      SQLite::Statement q(db, fmt::format("SELECT s.id, s.value, s.value IN {}, {} FROM (SELECT DISTINCT name_id "
                                          "FROM _api_call WHERE +trace_id = ?) n JOIN string s ON s.id = n.name_id",
                                          kTimingCalls, kColdStartCalls));
      q.bind(1, trace_id);
      while (q.executeStep()) {
        int64_t name_id = q.getColumn(0).getInt64();
        bool timing = q.getColumn(2).getInt64() != 0, cold = q.getColumn(3).getInt64() != 0;
        if (!timing && !cold) continue;
        if (timing) timing_ids.insert(name_id);
        if (cold) cold_ids.insert(name_id);
        api_names[name_id] = q.getColumn(1).getString();
        wanted.push_back(name_id);
      }
    }
    struct Call {
      int64_t start_ns, id, name_id;
      std::string op;
    };
    std::vector<Call> calls;  // named calls inside conv ops
    if (!wanted.empty()) {
      // One ? per name id (the authorizer of the read-only guard refuses json_each).
      std::string placeholders;
      for (size_t i = 0; i < wanted.size(); ++i) placeholders += i ? ", ?" : "?";
      SQLite::Statement q(db, fmt::format("SELECT a.start_ns, a.id, a.name_id, s.value FROM _api_call a "
                                          "JOIN _op o ON o.id = a.op_id JOIN string s ON s.id = o.name_id "
                                          "WHERE +a.trace_id = ? AND a.name_id IN ({}) AND {}",
                                          placeholders, kConvOp));
      q.bind(1, trace_id);
      for (size_t i = 0; i < wanted.size(); ++i) q.bind(static_cast<int>(i) + 2, wanted[i]);
      while (q.executeStep())
        calls.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64(), q.getColumn(2).getInt64(),
                         q.getColumn(3).getString()});
    }

    // 1. Algorithm search seen: autotuning is on (or the app times algorithms itself) -> nothing to report.
    int64_t timing_calls = 0;
    for (const auto& c : calls) timing_calls += timing_ids.count(c.name_id) ? 1 : 0;
    if (timing_calls > 0) return;

    // 2. First convolutions of the process captured (cuDNN initialisation inside a conv op).
    int64_t cold_calls = 0, cold_example = -1;
    std::string cold_op;
    std::set<std::string> cold_apis;
    std::sort(calls.begin(), calls.end(), [](const Call& a, const Call& b) {
      return a.start_ns < b.start_ns || (a.start_ns == b.start_ns && a.id < b.id);
    });
    for (const auto& c : calls) {
      if (!cold_ids.count(c.name_id)) continue;
      if (cold_calls++ == 0) {
        cold_example = c.id;
        cold_op = c.op;
      }
      cold_apis.insert(api_names[c.name_id]);
    }
    bool cold_start = cold_calls > 0;
    double generic_share = static_cast<double>(generic_ns) / static_cast<double>(conv_ns);
    if (!cold_start && !(report_unverified_ && generic_share >= min_generic_share_)) return;

    // Benchmark mode pays off only when the conv input shapes repeat: with a new shape every step
    // it would search again and again. Compare distinct shapes per iteration with those of the whole trace.
    std::map<int64_t, std::set<std::string>> shapes_by_iter;
    std::set<std::string> all_shapes;
    {
      SQLite::Statement q(
          db, fmt::format("SELECT o.iteration, o.name || ' ' || o.input_dims FROM op o WHERE o.trace_id = ? "
                          "AND o.iteration IS NOT NULL AND o.input_dims IS NOT NULL AND o.gpu_time_ns > 0 AND {}",
                          kConvOp));
      q.bind(1, trace_id);
      while (q.executeStep()) {
        std::string s = q.getColumn(1).getString();
        shapes_by_iter[q.getColumn(0).getInt64()].insert(s);
        all_shapes.insert(std::move(s));
      }
    }
    double mean_shapes = 0;
    for (const auto& [it, s] : shapes_by_iter) mean_shapes += static_cast<double>(s.size());
    if (!shapes_by_iter.empty()) mean_shapes /= static_cast<double>(shapes_by_iter.size());
    if (shapes_by_iter.size() >= 2 && static_cast<double>(all_shapes.size()) > max_shape_growth_ * mean_shapes) return;

    double busy_share = std::min(1.0, conv_share);
    auto critical = std::min<int64_t>(conv_ns, static_cast<int64_t>(busy_share * static_cast<double>(kernel_busy)));
    auto savings = static_cast<int64_t>(expected_gain_ * static_cast<double>(critical));

    std::string top;
    for (size_t i = 0; i < conv_names.size() && i < 3; ++i) {
      std::string n = conv_names[i].first;
      if (n.starts_with("void ")) n = n.substr(5);
      if (size_t p = n.find('('); p != std::string::npos && p > 0) n = n.substr(0, p);
      if (n.size() > 80) n = n.substr(0, 78) + "…";
      top += fmt::format("{}{} {}", i ? ", " : "", n, format_ns(conv_names[i].second));
    }

    std::string api_list;
    for (const auto& a : cold_apis) api_list += (api_list.empty() ? "" : ", ") + a;

    Finding f = make_finding(FindingScope::of_trace(trace_id).on_device(
        summary->devices.size() == 1 ? std::optional<int64_t>(summary->devices.front().device_id) : std::nullopt));
    if (cold_start) {
      f.problem = fmt::format(
          "Convolutions take {} ({} of kernel time, {} cuDNN kernels), and the trace contains the process's first "
          "convolutions, "
          "with cuDNN's initialisation inside them "
          "({} start-up call(s): {}, first inside {}), yet no convolution op timed candidate algorithms (no "
          "cudaEventSynchronize/cudaEventElapsedTime in any conv op): cuDNN chose its algorithms by heuristics, i.e. "
          "`torch.backends.cudnn.benchmark` is off. {} of the convolution time is in cuDNN's generic kernels. Top "
          "kernels: {}.",
          format_ns(conv_ns), format_percent(conv_share), conv_kernels, cold_calls, api_list, cold_op,
          format_percent(generic_share), top);
    } else {
      f.problem = fmt::format(
          "Convolutions take {} ({} of kernel time), {} of it in cuDNN's generic fallback kernels "
          "(implicit/explicit_convolve_sgemm, "
          "wgrad_alg0_engine, dgrad_engine) that its heuristics pick; the trace starts after warm-up, so whether "
          "`torch.backends.cudnn.benchmark` is on cannot be verified. Top kernels: {}.",
          format_ns(conv_ns), format_percent(conv_share), format_percent(generic_share), top);
    }
    f.recommendation =
        "Set `torch.backends.cudnn.benchmark = True` once at start-up when the input shapes are fixed (same image size "
        "and batch "
        "size every step; use `drop_last=True` in the DataLoader so the last batch does not trigger a new search): the "
        "first "
        "iteration times every cuDNN algorithm for each convolution shape and later iterations use the fastest. Leave "
        "it off "
        "when shapes change every step. TensorFlow autotunes by default (`TF_CUDNN_USE_AUTOTUNE=1`, do not set it to "
        "0).";
    f.estimated_savings_ns = savings;
    f.savings_method = fmt::format(
        "convolution kernel time, bounded by its share of the flattened GPU busy time, x {:.2f} (expected_gain, the "
        "assumed "
        "gain of the fastest measured algorithm over the heuristic choice)",
        expected_gain_);
    f.confidence = cold_start ? 0.5 : 0.25;
    f.evidence["conv_kernel_time_ns"] = conv_ns;
    f.evidence["conv_kernels"] = conv_kernels;
    f.evidence["conv_share_of_kernel_time"] = conv_share;
    f.evidence["generic_kernel_share_of_conv"] = generic_share;
    f.evidence["algorithm_timing_calls_in_conv_ops"] = timing_calls;
    f.evidence["cudnn_init_calls_in_conv_ops"] = cold_calls;
    if (cold_example >= 0) f.evidence["example_init_api_call_id"] = cold_example;
    f.evidence["distinct_conv_shapes"] = static_cast<int64_t>(all_shapes.size());
    f.evidence["signal"] =
        cold_start ? "first convolutions captured without algorithm search" : "generic kernels only (unverified)";
    sink.report(std::move(f));
  }

 private:
  double min_conv_share_;
  int64_t min_conv_kernels_;
  double expected_gain_;
  bool report_unverified_;
  double min_generic_share_, max_shape_growth_;
};

}  // namespace

DetectorInfo cudnn_benchmark_off_info() {
  return {
      "cudnn-benchmark-off",
      {{"min_conv_share", 0.2, "report only when cuDNN convolution kernels take at least this share of kernel time"},
       {"min_conv_kernels", 100,
        "and when the trace holds at least this many of them (a search pays off over many calls)"},
       {"expected_gain", 0.1, "assumed share of convolution time that autotuned algorithms save"},
       {"report_unverified", false,
        "also report steady-state traces (no cuDNN start-up captured) dominated by generic kernels"},
       {"min_generic_share", 0.5, "with report_unverified: share of conv time in generic kernels needed"},
       {"max_shape_growth", 1.5,
        "stay silent when the trace has more than this times the distinct conv shapes of one iteration"}},
      [](const OptionValues& o) { return std::make_unique<CudnnBenchmarkOff>(o); }};
}

}  // namespace proflint
