// detectors/batch_size.cpp — batch-size
// Reads the batch size off memory and utilization (DLProf "Batch Size", the TensorBoard plugin's
// low-utilization and memory-at-the-limit rules): a host-bound GPU using a small part of its memory
// can take a larger batch; a device whose allocator reserves nearly all memory is at risk of OOM and
// fragmentation. Docs: docs/detectors/batch-size.md
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/common/format.hpp"

namespace proflint {

namespace {

struct Memory {
  int64_t device_id = 0;
  int64_t samples = 0;
  std::optional<int64_t> peak_allocated;  // NULL when the trace records only deltas
  std::optional<int64_t> peak_reserved;
  int64_t delta_lower_bound = 0;  // max cumulative delta: a lower bound of the peak
  int64_t reserved_at_peak_alloc = 0;
};

struct BatchGuess {
  std::string op, dims_text;
  int64_t batch = 0;
  std::optional<int64_t> sequence;
  int64_t op_id = 0;
};

int64_t exists(SQLite::Database& db, const char* sql, int64_t trace_id) {
  SQLite::Statement q(db, sql);
  for (int i = 1; i <= q.getBindParameterCount(); ++i) q.bind(i, trace_id);
  return q.executeStep() ? q.getColumn(0).getInt64() : 0;
}

// The first conv/embedding/linear op with recorded input shapes: its input's leading dimension is
// the batch (for an embedding the indices, input 1; for a 3-D linear input also the sequence).
std::optional<BatchGuess> guess_batch(SQLite::Database& db, int64_t trace_id) {
  SQLite::Statement q(
      db,
      // Base tables (the op view would join every op's range and strings before the LIMIT).
      "SELECT o.id, s.value, o.op_type, d.value FROM _op o JOIN _range r ON r.id = o.range_id "
      "JOIN string d ON d.id = r.input_dims_id JOIN string s ON s.id = o.name_id WHERE o.trace_id = ? "
      "AND o.op_type IN ('conv1d', 'conv2d', 'conv3d', 'embedding', 'linear') ORDER BY o.start_ns, o.id LIMIT 1");
  q.bind(1, trace_id);
  if (!q.executeStep()) return std::nullopt;
  BatchGuess g;
  g.op_id = q.getColumn(0).getInt64();
  g.op = q.getColumn(1).getString();
  std::string type = q.getColumn(2).getString();
  g.dims_text = q.getColumn(3).getString();
  auto dims = nlohmann::json::parse(g.dims_text, nullptr, false);
  size_t input = type == "embedding" ? 1 : 0;
  if (!dims.is_array() || dims.size() <= input || !dims[input].is_array() || dims[input].empty()) return std::nullopt;
  const auto& d = dims[input];
  if (!d[0].is_number_integer()) return std::nullopt;
  g.batch = d[0].get<int64_t>();
  bool tokens = (type == "embedding" && d.size() == 2) || (type == "linear" && d.size() == 3);
  if (tokens && d[1].is_number_integer()) g.sequence = d[1].get<int64_t>();
  // A compact one-line form of the dims for the text.
  g.dims_text = dims.dump();
  // A leading dimension beyond 2^40 is a corrupt or edited shape, not a batch (and batch × k must fit).
  if (g.batch <= 0 || g.batch > (int64_t{1} << 40)) return std::nullopt;
  return g;
}

// Per device: sample count, peaks, the reserved bytes at the first sample of peak allocation
// (table order, as a LIMIT 1 scan found it) and the largest running sum of deltas in time order.
// One scan of memory_sample; a GROUP BY, a window query and a lookup per device read it 2n+1 times.
std::vector<Memory> read_memory(SQLite::Database& db, int64_t trace_id) {
  struct Sample {
    int64_t ts_ns;
    std::optional<int64_t> delta;
  };
  std::map<int64_t, std::pair<Memory, std::vector<Sample>>> devices;
  {
    SQLite::Statement q(db,
                        "SELECT device_id, ts_ns, allocated_bytes, reserved_bytes, delta_bytes FROM memory_sample "
                        "WHERE trace_id = ? AND device_id >= 0 ORDER BY rowid");
    q.bind(1, trace_id);
    while (q.executeStep()) {
      int64_t device = q.getColumn(0).getInt64();
      auto& [m, samples] = devices[device];
      m.device_id = device;
      ++m.samples;
      if (!q.isColumnNull(2)) {
        int64_t allocated = q.getColumn(2).getInt64();
        if (!m.peak_allocated || allocated > *m.peak_allocated) {
          m.peak_allocated = allocated;
          m.reserved_at_peak_alloc = q.isColumnNull(3) ? 0 : q.getColumn(3).getInt64();
        }
      }
      if (!q.isColumnNull(3)) {
        int64_t reserved = q.getColumn(3).getInt64();
        if (!m.peak_reserved || reserved > *m.peak_reserved) m.peak_reserved = reserved;
      }
      samples.push_back({q.getColumn(1).getInt64(),
                         q.isColumnNull(4) ? std::nullopt : std::optional<int64_t>(q.getColumn(4).getInt64())});
    }
  }
  std::vector<Memory> out;
  for (auto& [device, entry] : devices) {
    auto& [m, samples] = entry;
    std::stable_sort(samples.begin(), samples.end(),
                     [](const Sample& a, const Sample& b) { return a.ts_ns < b.ts_ns; });
    bool ties = std::adjacent_find(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) {
                  return a.ts_ns == b.ts_ns;
                }) != samples.end();
    std::optional<int64_t> best;
    if (!ties) {
      std::optional<int64_t> sum;  // sum() over the rows so far: NULL until a non-NULL delta
      for (const auto& x : samples) {
        if (x.delta) sum = sum.value_or(0) + *x.delta;
        if (sum && (!best || *sum > *best)) best = sum;
      }
    } else {
      // Equal timestamps: the running sum depends on SQLite's order among them; let it decide.
      SQLite::Statement q(
          db,
          "SELECT max(c) FROM (SELECT sum(delta_bytes) OVER (ORDER BY ts_ns ROWS UNBOUNDED PRECEDING) c "
          "FROM memory_sample WHERE trace_id = ? AND device_id = ?)");
      q.bind(1, trace_id);
      q.bind(2, device);
      if (q.executeStep() && !q.isColumnNull(0)) best = q.getColumn(0).getInt64();
    }
    if (best) m.delta_lower_bound = std::max<int64_t>(0, *best);
    out.push_back(m);
  }
  return out;
}

class BatchSize final : public Detector {
 public:
  explicit BatchSize(const OptionValues& o)
      : max_memory_share_(o.number("max_memory_share")),
        max_utilization_(o.number("max_utilization")),
        target_utilization_(o.number("target_utilization")),
        memory_target_(o.number("memory_target")),
        max_factor_(std::max<int64_t>(2, o.integer("max_factor"))),
        limit_share_(o.number("limit_share")) {}

  std::string_view id() const override { return "batch-size"; }
  std::string_view title() const override { return "Batch size does not fit the GPU"; }
  std::vector<std::string> needs() const override { return {"memory", "kernels"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* s = facts.summary(trace_id);
    auto& db = facts.db();
    std::vector<Memory> mems = read_memory(db, trace_id);
    bool training = exists(db,
                           "SELECT EXISTS (SELECT 1 FROM _op WHERE trace_id = ? AND pass IN ('optimizer')) "
                           "OR EXISTS (SELECT 1 FROM _range WHERE trace_id = ? AND name_id IN (SELECT id FROM string "
                           "WHERE value LIKE 'Optimizer.step#%' OR value LIKE '%Backward%'))",
                           trace_id) != 0;
    // Read only when a finding needs it (a scan of every op).
    std::optional<std::optional<BatchGuess>> batch_guess;
    auto batch = [&]() -> const std::optional<BatchGuess>& {
      if (!batch_guess) batch_guess = guess_batch(db, trace_id);
      return *batch_guess;
    };

    for (const auto& m : mems) {
      int64_t capacity = 0;
      std::string gpu_name;
      {
        SQLite::Statement q(
            db,
            "SELECT COALESCE(memory_bytes, 0), COALESCE(name, '') FROM device WHERE trace_id = ? AND device_id = ?");
        q.bind(1, trace_id);
        q.bind(2, m.device_id);
        if (q.executeStep()) {
          capacity = q.getColumn(0).getInt64();
          gpu_name = q.getColumn(1).getString();
        }
      }
      if (capacity <= 0) continue;
      const DeviceSummary* d = nullptr;
      for (const auto& ds : s->devices)
        if (ds.device_id == m.device_id) d = &ds;
      std::string device =
          gpu_name.empty() ? fmt::format("GPU {}", m.device_id) : fmt::format("GPU {} ({})", m.device_id, gpu_name);

      // At the limit: what the allocator holds (reserved), else what is allocated, else the
      // lower bound from deltas.
      int64_t held = m.peak_reserved.value_or(m.peak_allocated.value_or(m.delta_lower_bound));
      if (static_cast<double>(held) > limit_share_ * static_cast<double>(capacity)) {
        report_limit(facts, trace_id, m, held, capacity, device, batch(), training, sink);
        continue;
      }
      // Too small: needs the true peak (totals), a host-bound device and headroom.
      if (!m.peak_allocated || !d || d->window_ns <= 0) continue;
      int64_t peak = *m.peak_allocated;
      double mem_share = static_cast<double>(peak) / static_cast<double>(capacity);
      if (mem_share >= max_memory_share_ || d->gpu_utilization >= max_utilization_) continue;
      std::string waits = biggest_wait(*d);
      if (waits != "runtime" && waits != "cpu" && waits != "idle")
        continue;  // input- or copy-bound: batch is not the lever
      double util_factor =
          d->gpu_utilization > 0 ? target_utilization_ / d->gpu_utilization : static_cast<double>(max_factor_);
      double mem_factor = peak > 0 ? memory_target_ * static_cast<double>(capacity) / static_cast<double>(peak)
                                   : static_cast<double>(max_factor_);
      double limit = std::min({static_cast<double>(max_factor_), util_factor, mem_factor});
      int64_t k = 1;
      while (k * 2 <= limit && k < (int64_t{1} << 20)) k *= 2;  // max_factor may be any number
      if (k < 2) continue;
      report_small(facts, trace_id, *d, m, peak, capacity, device, batch(), training, k, waits, sink);
    }
  }

 private:
  static std::string biggest_wait(const DeviceSummary& d) {
    std::string best;
    int64_t ns = -1;
    for (const char* c : {"memcpy", "memset", "runtime", "dataloader", "cpu", "idle"}) {
      auto it = d.breakdown_ns.find(c);
      int64_t v = it == d.breakdown_ns.end() ? 0 : it->second;
      if (v > ns) {
        ns = v;
        best = c;
      }
    }
    return best;
  }

  static std::string batch_text(const std::optional<BatchGuess>& b) {
    if (!b) return "The input batch size is not recorded (profile with `record_shapes=True` to see it).";
    std::string t = fmt::format("The input batch is {}", b->batch);
    if (b->sequence) t += fmt::format(" × {} tokens", *b->sequence);
    t += fmt::format(" (leading input dimension of the first {}, Input Dims {}).", b->op, b->dims_text);
    return t;
  }

  void report_small(const Facts& facts, int64_t trace_id, const DeviceSummary& d, const Memory& m, int64_t peak,
                    int64_t capacity, const std::string& device, const std::optional<BatchGuess>& batch, bool training,
                    int64_t k, const std::string& waits, FindingSink& sink) const {
    const TraceSummary* s = facts.summary(trace_id);
    const int64_t W = d.window_ns, K = d.kernel_busy_ns;
    double mem_factor = peak > 0 ? memory_target_ * static_cast<double>(capacity) / static_cast<double>(peak) : 0;
    std::string problem = fmt::format(
        "{} is host-bound with memory to spare: its kernels are busy {} of the time ({} of {}), the largest part of "
        "the "
        "rest being {}, while the peak allocated memory is {} of {} ({}). {}",
        device, format_percent(d.gpu_utilization), format_ns(K), format_ns(W),
        waits == "runtime" ? "CUDA API calls"
        : waits == "cpu"   ? "host-side framework ops"
                           : "unrecorded host time",
        format_bytes(peak), format_bytes(capacity),
        format_percent(static_cast<double>(peak) / static_cast<double>(capacity)), batch_text(batch));
    problem +=
        " Per-step host overhead does not grow with the batch, so each step can carry more samples for about the same "
        "time.";
    std::string example = batch ? fmt::format(" (batch {} → {})", batch->batch, batch->batch * k) : "";
    std::string rec = fmt::format(
        "Increase the batch size ×{}{}: memory allows about ×{:.0f} at {} of the device, and "
        "×{} brings kernel utilization towards {}. ",
        k, example, std::floor(mem_factor), format_percent(memory_target_), k,
        format_percent(std::min(1.0, d.gpu_utilization * static_cast<double>(k))));
    if (training)
      rec +=
          "Training: scale the learning rate with the batch (linear scaling for SGD, lr × k with a few warm-up epochs; "
          "about lr × √k for Adam/AdamW) and re-check convergence; if the global batch must stay fixed, use fewer "
          "data-parallel ranks or fewer gradient-accumulation steps instead.";
    else
      rec +=
          "Inference: batch requests together (stack several inputs into one forward, or let the serving stack batch "
          "dynamically) — per-request latency stays about the same while throughput grows.";
    rec +=
        " If the batch cannot change, cut the per-step host cost instead: `torch.compile(model)` or CUDA graphs "
        "(`mode=\"reduce-overhead\"`).";

    Finding f = make_finding("Batch is too small for the GPU",
                             FindingScope::of_trace(trace_id).on_device(d.device_id).of_rank(s->rank));
    f.problem = std::move(problem);
    f.recommendation = std::move(rec);
    // Same samples at batch ×k: host time per step stays, GPU time grows k-fold, so the time per
    // original batch becomes max(W/k, K).
    int64_t after = std::max<int64_t>(W / k, K);
    f.estimated_savings_ns = std::max<int64_t>(0, W - after);
    f.savings_method = fmt::format(
        "time per original batch at batch ×{}: window − max(window/{}, kernel busy), assuming the "
        "host cost per step stays and GPU time grows linearly; overlaps gpu-underutilized and launch-bound",
        k, k);
    f.confidence = batch ? 0.5 : 0.4;
    f.evidence["peak_allocated_bytes"] = peak;
    if (m.peak_reserved) f.evidence["peak_reserved_bytes"] = *m.peak_reserved;
    f.evidence["device_memory_bytes"] = capacity;
    f.evidence["kernel_utilization"] = std::round(d.gpu_utilization * 10000) / 10000;
    f.evidence["waits_on"] = waits;
    f.evidence["factor"] = k;
    f.evidence["training"] = training;
    if (batch) {
      f.evidence["batch"] = batch->batch;
      if (batch->sequence) f.evidence["sequence"] = *batch->sequence;
      f.evidence["batch_op"] = batch->op;
      f.evidence["batch_op_id"] = batch->op_id;
    }
    sink.report(std::move(f));
  }

  void report_limit(const Facts& facts, int64_t trace_id, const Memory& m, int64_t held, int64_t capacity,
                    const std::string& device, const std::optional<BatchGuess>& batch, bool training,
                    FindingSink& sink) const {
    const TraceSummary* s = facts.summary(trace_id);
    auto& db = facts.db();
    std::string what = m.peak_reserved ? "reserved by the caching allocator"
                       : m.peak_allocated
                           ? "allocated"
                           : "allocated during the capture (a lower bound: the trace records only changes)";
    std::string problem = fmt::format("{} is at its memory limit: {} of {} ({}) {} at the peak.", device,
                                      format_bytes(held), format_bytes(capacity),
                                      format_percent(static_cast<double>(held) / static_cast<double>(capacity)), what);
    if (m.peak_allocated && m.peak_reserved && m.reserved_at_peak_alloc > *m.peak_allocated) {
      int64_t slack = m.reserved_at_peak_alloc - *m.peak_allocated;
      problem += fmt::format(
          " At the allocation peak ({}) the allocator holds {} more than it hands out ({} of reserved memory "
          "unused: fragmentation).",
          format_bytes(*m.peak_allocated), format_bytes(slack),
          format_percent(static_cast<double>(slack) / static_cast<double>(m.reserved_at_peak_alloc)));
    }
    // Under memory pressure the caching allocator frees its cache and retries: cudaMalloc/cudaFree
    // inside iterations (they synchronize the device) are the cost already being paid.
    int64_t alloc_calls = 0, alloc_ns = 0;
    {
      SQLite::Statement q(
          db,
          "SELECT count(*), COALESCE(sum(dur_ns), 0) FROM _api_call WHERE trace_id = ? AND iteration IS NOT NULL "
          "AND name_id IN (SELECT id FROM string WHERE value IN ('cudaMalloc', 'cudaFree', 'hipMalloc', 'hipFree', "
          "'cuMemAlloc', 'cuMemFree'))");
      q.bind(1, trace_id);
      if (q.executeStep()) {
        alloc_calls = q.getColumn(0).getInt64();
        alloc_ns = q.getColumn(1).getInt64();
      }
    }
    if (alloc_calls > 0)
      problem += fmt::format(
          " Inside the iterations, {} cudaMalloc/cudaFree calls take {}: the allocator is releasing and "
          "re-acquiring memory, which synchronizes the device.",
          alloc_calls, format_ns(alloc_ns));
    problem +=
        " One larger input or a longer sequence can end the run with an out-of-memory error. " + batch_text(batch);
    // Autocast is advice only where the math still runs in FP32.
    bool mixed =
        exists(db,
               // The ops of Tensor-Core-eligible work: the outermost eligible op of each kernel
               // (kernel.tc_eligible_op_id) or the op that launched it. Under autocast the outer op
               // (aten::linear) still takes FP32 and casts; the op below it gets Half/BFloat16.
               "SELECT EXISTS (SELECT 1 FROM _kernel k JOIN _op o ON o.id IN (k.op_id, k.tc_eligible_op_id) "
               "JOIN _range r ON r.id = o.range_id WHERE k.trace_id = ? AND k.tc_eligible_op_id IS NOT NULL "
               "AND r.input_types_id IN (SELECT id FROM string WHERE value LIKE '%Half%' "
               "OR value LIKE '%BFloat16%' OR value LIKE '%Float8%'))",
               trace_id) != 0;
    int64_t major = 0;
    {
      SQLite::Statement q(db, "SELECT COALESCE(compute_major, 0) FROM device WHERE trace_id = ? AND device_id = ?");
      q.bind(1, trace_id);
      q.bind(2, m.device_id);
      if (q.executeStep()) major = q.getColumn(0).getInt64();
    }
    std::string rec =
        "Make room before it fails: set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` (less fragmentation), ";
    if (!mixed)
      rec +=
          major >= 8 || major == 0
              ? "use bf16 autocast (`torch.autocast(\"cuda\", dtype=torch.bfloat16)` about halves activation memory), "
              : "use fp16 autocast (`torch.autocast(\"cuda\", dtype=torch.float16)` with "
                "`torch.cuda.amp.GradScaler()`, "
                "about half the activation memory), ";
    rec += "recompute activations with `torch.utils.checkpoint.checkpoint(...)`";
    rec +=
        training
            ? ", or halve the micro-batch and accumulate gradients over 2 steps (divide the loss by the accumulation "
              "steps and call `optimizer.step()` every 2nd step) so the effective batch stays the same."
            : ", or lower the batch.";

    Finding f = make_finding("GPU memory is at the limit",
                             FindingScope::of_trace(trace_id).on_device(m.device_id).of_rank(s->rank));
    f.problem = std::move(problem);
    f.recommendation = std::move(rec);
    f.estimated_savings_ns = alloc_ns;
    f.savings_method =
        "time in cudaMalloc/cudaFree inside iterations (the allocator's retries under memory pressure); the "
        "main benefit is avoiding an out-of-memory failure, which has no time estimate";
    f.severity = Severity::low;
    if (alloc_ns > 0 && s->wall_ns > 0 && static_cast<double>(alloc_ns) >= 0.03 * static_cast<double>(s->wall_ns))
      f.severity.reset();
    f.confidence = m.peak_reserved || m.peak_allocated ? 0.8 : 0.6;
    if (m.peak_allocated) f.evidence["peak_allocated_bytes"] = *m.peak_allocated;
    if (m.peak_reserved) f.evidence["peak_reserved_bytes"] = *m.peak_reserved;
    if (!m.peak_allocated) f.evidence["allocated_lower_bound_bytes"] = m.delta_lower_bound;
    f.evidence["device_memory_bytes"] = capacity;
    f.evidence["alloc_calls_in_iterations"] = alloc_calls;
    f.evidence["alloc_ns_in_iterations"] = alloc_ns;
    if (batch) {
      f.evidence["batch"] = batch->batch;
      f.evidence["batch_op"] = batch->op;
    }
    sink.report(std::move(f));
  }

  double max_memory_share_;
  double max_utilization_;
  double target_utilization_;
  double memory_target_;
  int64_t max_factor_;
  double limit_share_;
};

}  // namespace

DetectorInfo batch_size_info() {
  return {"batch-size",
          {{"max_memory_share", 0.5, "small batch: the peak allocated memory is below this share of the device memory"},
           {"max_utilization", 0.5,
            "... and kernels are busy less than this share of the window (TensorBoard plugin: 0.5)"},
           {"target_utilization", 0.8, "utilization the suggested factor aims for"},
           {"memory_target", 0.8,
            "share of device memory the suggested factor may fill (all memory assumed to scale with the batch)"},
           {"max_factor", 8, "largest batch multiplier suggested at once"},
           {"limit_share", 0.9,
            "memory at the limit: peak reserved (else allocated) memory above this share of the device (TensorBoard "
            "plugin: 0.9)"}},
          [](const OptionValues& o) { return std::make_unique<BatchSize>(o); }};
}

}  // namespace proflint
