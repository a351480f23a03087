// detectors/no_fusion.cpp — no-fusion
// Flags long back-to-back runs of tiny elementwise/reduction kernels (per-parameter optimizer
// updates, unfused activation chains) that a fused optimizer or a compiler would merge.
// Docs: docs/detectors/no-fusion.md
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <range/v3/iterator/operations.hpp>
#include <range/v3/range/operations.hpp>
#include <range/v3/view/chunk_by.hpp>
#include <range/v3/view/enumerate.hpp>
#include <range/v3/view/take.hpp>
#include <set>
#include <tuple>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/id_list.hpp"
#include "engine/common/format.hpp"

namespace proflint {

namespace {

struct Span {
  int64_t start = 0, end = 0;
};

int64_t union_length(std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  int64_t total = 0, cur_s = 0, cur_e = 0;
  bool open = false;
  for (const auto& s : spans) {
    if (s.end <= s.start) continue;
    if (open && s.start <= cur_e) {
      cur_e = std::max(cur_e, s.end);
      continue;
    }
    if (open) total += cur_e - cur_s;
    cur_s = s.start;
    cur_e = s.end;
    open = true;
  }
  if (open) total += cur_e - cur_s;
  return total;
}

class NoFusion final : public Detector {
 public:
  explicit NoFusion(const OptionValues& o)
      : max_kernel_ns_(o.integer("max_kernel_ns")),
        max_gap_ns_(o.integer("max_gap_ns")),
        min_run_(std::max<int64_t>(2, o.integer("min_run"))),
        fusion_factor_(std::max(1.0, o.number("fusion_factor"))),
        min_share_(o.number("min_share")),
        top_(static_cast<size_t>(std::max<int64_t>(1, o.integer("top")))),
        min_elementwise_share_(o.number("min_elementwise_share")),
        memory_fusion_factor_(std::max(1.0, o.number("memory_fusion_factor"))) {}

  std::string_view id() const override { return "no-fusion"; }
  std::string_view title() const override { return "Long runs of tiny unfused elementwise kernels"; }
  std::vector<std::string> needs() const override { return {"kernels"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* summary = facts.summary(trace_id);
    if (!summary || summary->wall_ns <= 0) return;
    auto& db = facts.db();
    for (const DeviceSummary& dev : summary->devices) {
      if (dev.kernel_count < min_run_ || dev.window_ns <= 0) continue;
      // Read in index order and sorted here by (stream_id, start_ns, id), NULL streams first as
      // in SQL: cheaper than an SQL sort of every kernel of the device.
      SQLite::Statement q(db,
                          "SELECT id, stream_id, start_ns, dur_ns, category, op_id, iteration FROM _kernel "
                          "WHERE trace_id = ? AND device_id IS ?");
      q.bind(1, trace_id);
      q.bind(2, dev.device_id);
      struct K {
        int64_t id, stream, start, dur, op, iteration;
        bool small, null_stream;
      };
      std::vector<K> ks;
      while (q.executeStep()) {
        const char* cat = q.getColumn(4).isNull() ? "" : q.getColumn(4).getText();
        int64_t dur = q.getColumn(3).getInt64();
        bool null_stream = q.getColumn(1).isNull();
        ks.push_back({q.getColumn(0).getInt64(), null_stream ? -1 : q.getColumn(1).getInt64(),
                      q.getColumn(2).getInt64(), dur, q.getColumn(5).isNull() ? -1 : q.getColumn(5).getInt64(),
                      q.getColumn(6).isNull() ? -1 : q.getColumn(6).getInt64(),
                      (std::strcmp(cat, "elementwise") == 0 || std::strcmp(cat, "reduction") == 0) && dur <= max_kernel_ns_,
                      null_stream});
      }
      std::sort(ks.begin(), ks.end(), [](const K& a, const K& b) {
        if (a.null_stream != b.null_stream) return a.null_stream;
        if (a.stream != b.stream) return a.stream < b.stream;
        if (a.start != b.start) return a.start < b.start;
        return a.id < b.id;
      });
      // Runs: consecutive small kernels on one stream, each starting within max_gap_ns of the previous end.
      std::vector<Span> spans;
      std::vector<std::vector<int64_t>> run_ops;  // per run, the op id of each kernel
      std::map<int64_t, int64_t> kernels_by_op;  // op id -> kernels in runs
      int64_t run_kernels = 0, run_kernel_ns = 0, runs = 0, longest = 0, first_iter = -1, last_iter = -1, example = -1;
      const auto same_run = [this](const K& a, const K& b) {
        return a.small && b.small && b.stream == a.stream && b.start - (a.start + a.dur) <= max_gap_ns_;
      };
      for (auto run : ks | ranges::views::chunk_by(same_run)) {
        const K& head = ranges::front(run);
        const K& tail = ranges::back(run);
        const auto n = static_cast<int64_t>(ranges::distance(run));
        if (!head.small || n < min_run_) continue;
        ++runs;
        if (n > longest) {
          longest = n;
          example = head.id;
        }
        spans.push_back({head.start, tail.start + tail.dur});
        run_ops.emplace_back();
        for (const K& k : run) {
          run_kernels += 1;
          run_kernel_ns += k.dur;
          kernels_by_op[k.op] += 1;
          run_ops.back().push_back(k.op);
          if (k.iteration >= 0) {
            first_iter = first_iter < 0 ? k.iteration : std::min(first_iter, k.iteration);
            last_iter = std::max(last_iter, k.iteration);
          }
        }
      }
      int64_t span_ns = union_length(spans);
      double wall_share = static_cast<double>(span_ns) / static_cast<double>(dev.window_ns);
      if (runs == 0 || wall_share < min_share_) {
        sink.below_threshold(checked_below(*this, trace_id, dev.device_id,
                                           "share of the GPU's window spanned by runs of tiny elementwise kernels",
                                           wall_share, min_share_, "share"));
        // Not tiny, but heavy: large unfused elementwise kernels can still dominate the GPU time.
        check_heavy(facts, trace_id, dev, sink);
        continue;
      }

      // Top op names (and passes) that launched the run kernels.
      struct OpAgg {
        std::string name, pass;
        int64_t kernels = 0;
      };
      std::map<std::pair<std::string, std::string>, int64_t> by_name;
      std::set<int64_t> optimizer_ops;
      {
        // Name and pass of every op at once (10^4-10^5 ops on long traces).
        std::map<int64_t, std::pair<std::string, std::string>> named;  // op id -> name, pass
        std::vector<int64_t> ids;
        for (const auto& [op, n] : kernels_by_op)
          if (op >= 0) ids.push_back(op);
        for_rows_with_ids(db, "SELECT o.id, s.value, o.pass FROM _op o JOIN string s ON s.id = o.name_id WHERE o.id IN ({ids})",
                          std::move(ids), [&](SQLite::Statement& o) {
                            named.emplace(o.getColumn(0).getInt64(),
                                          std::pair{o.getColumn(1).getString(),
                                                    o.getColumn(2).isNull() ? "other" : o.getColumn(2).getString()});
                          });
        for (const auto& [op, n] : kernels_by_op) {
          std::string name = "(no op)", pass = "other";
          if (auto it = named.find(op); it != named.end()) std::tie(name, pass) = it->second;
          by_name[{name, pass}] += n;
          if (pass == "optimizer") optimizer_ops.insert(op);
        }
      }
      std::vector<OpAgg> ops;
      int64_t optimizer_kernels = 0, zero_fill_kernels = 0;
      for (const auto& [k, n] : by_name) {
        ops.push_back({k.first, k.second, n});
        if (k.second == "optimizer") optimizer_kernels += n;
        if (k.second == "optimizer" && (k.first == "aten::fill_" || k.first == "aten::zero_")) zero_fill_kernels += n;
      }
      std::stable_sort(ops.begin(), ops.end(), [](const OpAgg& a, const OpAgg& b) { return a.kernels > b.kernels; });
      std::string op_text;
      for (const auto& [k, op] : ops | ranges::views::take(top_) | ranges::views::enumerate)
        op_text += fmt::format("{}{} ({}) ×{}", k ? ", " : "", op.name, op.pass, op.kernels);
      bool optimizer = optimizer_kernels * 2 >= run_kernels;

      Finding f = make_finding(
          FindingScope::of_trace(trace_id).on_device(dev.device_id).over_iterations_seen(first_iter, last_iter));
      f.problem = fmt::format(
          "On GPU {}, {} runs of at least {} back-to-back elementwise/reduction kernels shorter than {} (longest run "
          "{} kernels) "
          "hold {} kernels taking {} ({} of kernel time) and span {} of GPU timeline ({} of wall time), most of it "
          "launch and "
          "memory-round-trip overhead. Top ops: {}.",
          dev.device_id, runs, min_run_, format_ns(max_kernel_ns_), longest, run_kernels, format_ns(run_kernel_ns),
          format_percent(dev.kernel_time_ns > 0
                             ? static_cast<double>(run_kernel_ns) / static_cast<double>(dev.kernel_time_ns)
                             : 0.0),
          format_ns(span_ns), format_percent(wall_share), op_text);
      std::string rec;
      if (optimizer) {
        rec =
            "Most of these kernels are per-parameter optimizer updates: use the fused or multi-tensor optimizer, e.g. "
            "`torch.optim.AdamW(model.parameters(), lr=..., fused=True)` (or `foreach=True`; SGD and Adam take the "
            "same "
            "flags), which updates all parameters in a few kernels. For the remaining elementwise chains, "
            "`torch.compile(model)` "
            "fuses them.";
      } else {
        rec =
            "Let a compiler fuse the elementwise/reduction chains: `model = torch.compile(model)` in PyTorch (Inductor "
            "generates "
            "one kernel per chain), or use fused modules (e.g. fused LayerNorm/GELU, "
            "`torch.nn.functional.scaled_dot_product_attention`); "
            "if the kernels come from the optimizer, pass `fused=True` or `foreach=True` to it.";
      }
      if (zero_fill_kernels > 0)
        rec += fmt::format(
            " {} of the kernels zero-fill gradients one parameter at a time: call "
            "`optimizer.zero_grad(set_to_none=True)` (the default since PyTorch 2.0) to skip them.",
            zero_fill_kernels);
      rec +=
          " TensorFlow: compile the step with XLA, `@tf.function(jit_compile=True)` (or `model.compile(..., "
          "jit_compile=True)`).";
      f.recommendation = rec;
      f.estimated_savings_ns = static_cast<int64_t>(static_cast<double>(span_ns) * (1.0 - 1.0 / fusion_factor_));
      f.savings_method = fmt::format(
          "GPU timeline spanned by the runs (kernels plus the launch gaps between them) x (1 - 1/{:.1f}), assuming "
          "fusion merges "
          "about {:.1f} kernels into one (fusion_factor)",
          fusion_factor_, fusion_factor_);
      // The optimizer kernels' part of the estimate (each run's share of kernels from the optimizer
      // pass) is the saving optimizer-not-fused claims for the same kernels: one key, counted once.
      double optimizer_part = 0;
      for (size_t r = 0; r < spans.size(); ++r) {
        auto opt = std::count_if(run_ops[r].begin(), run_ops[r].end(), [&](int64_t op) { return optimizer_ops.count(op) > 0; });
        optimizer_part += static_cast<double>(spans[r].end - spans[r].start) * static_cast<double>(opt) /
                          static_cast<double>(run_ops[r].size());
      }
      if (optimizer_part > 0)
        f.claims[fmt::format("optimizer-kernels:t{}:d{}", trace_id, dev.device_id)] = std::min<int64_t>(
            f.estimated_savings_ns, static_cast<int64_t>(optimizer_part * (1.0 - 1.0 / fusion_factor_)));
      f.confidence = optimizer ? 0.7 : 0.5;
      f.evidence["runs"] = runs;
      f.evidence["run_kernels"] = run_kernels;
      f.evidence["longest_run"] = longest;
      f.evidence["run_kernel_time_ns"] = run_kernel_ns;
      f.evidence["run_span_ns"] = span_ns;
      f.evidence["kernel_time_ns"] = dev.kernel_time_ns;
      f.evidence["optimizer_kernels"] = optimizer_kernels;
      auto top = nlohmann::ordered_json::array();
      for (const OpAgg& op : ops | ranges::views::take(top_)) {
        nlohmann::ordered_json o;
        o["op"] = op.name;
        o["pass"] = op.pass;
        o["kernels"] = op.kernels;
        top.push_back(std::move(o));
      }
      f.evidence["top_ops"] = std::move(top);
      f.evidence["example_kernel_id"] = example;
      sink.report(std::move(f));
    }
  }

 private:
  // Memory-bound elementwise work that is not tiny: when unfused elementwise (pointwise) kernels take
  // at least `min_elementwise_share` of the device's kernel time and more than its GEMM,
  // convolution and attention kernels together, each op reads and writes its tensors through device
  // memory once more than a fused chain would (eager LLM inference at large batch: activations,
  // rotary embeddings, casts, residual adds). Kernels a compiler or library already fused (names with
  // "fused", multi-tensor-apply optimizer kernels) do not count.
  void check_heavy(const Facts& facts, int64_t trace_id, const DeviceSummary& dev, FindingSink& sink) const {
    if (dev.kernel_time_ns <= 0) return;
    SQLite::Statement q(facts.db(),
                        "SELECT k.category, s.value, sum(k.dur_ns), count(*), min(k.iteration), max(k.iteration), "
                        "min(k.id) FROM _kernel k JOIN string s ON s.id = k.name_id WHERE k.trace_id = ? AND "
                        "k.device_id IS ? GROUP BY k.name_id");
    q.bind(1, trace_id);
    q.bind(2, dev.device_id);
    struct Named {
      std::string name;
      int64_t ns, count, example;
    };
    std::vector<Named> unfused;
    int64_t unfused_ns = 0, unfused_count = 0, matmul_ns = 0, first_iter = -1, last_iter = -1;
    while (q.executeStep()) {
      std::string cat = q.getColumn(0).isNull() ? "" : q.getColumn(0).getString();
      std::string name = q.getColumn(1).getString();
      int64_t ns = q.getColumn(2).getInt64();
      if (cat == "gemm" || cat == "conv" || cat == "attention") matmul_ns += ns;
      // Pointwise kernels only: the chains a compiler fuses. Reductions and normalizations are one
      // kernel per op already (and a CNN's batch norm is not a chain to fuse away).
      if (cat != "elementwise") continue;
      std::string lower;
      for (char c : name) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      if (lower.find("fused") != std::string::npos || lower.find("multi_tensor_apply") != std::string::npos) continue;
      unfused_ns += ns;
      unfused_count += q.getColumn(3).getInt64();
      unfused.push_back({std::move(name), ns, q.getColumn(3).getInt64(), q.getColumn(6).getInt64()});
      if (!q.getColumn(4).isNull()) {
        int64_t lo = q.getColumn(4).getInt64(), hi = q.getColumn(5).getInt64();
        first_iter = first_iter < 0 ? lo : std::min(first_iter, lo);
        last_iter = std::max(last_iter, hi);
      }
    }
    const double share = static_cast<double>(unfused_ns) / static_cast<double>(dev.kernel_time_ns);
    if (share < min_elementwise_share_ || unfused_ns <= matmul_ns) {
      sink.below_threshold(checked_below(*this, trace_id, dev.device_id,
                                         "share of kernel time in unfused elementwise kernels", share,
                                         min_elementwise_share_, "share of kernel time"));
      return;
    }
    std::sort(unfused.begin(), unfused.end(), [](const Named& a, const Named& b) {
      return a.ns > b.ns || (a.ns == b.ns && a.name < b.name);
    });
    // The text names each kernel by its signature up to the argument list, cut to 120 characters
    // (elementwise_kernel instances are long template signatures); the evidence keeps the full name.
    auto readable = [](std::string_view n) {
      if (n.starts_with("void ")) n.remove_prefix(5);
      n = n.substr(0, std::min(n.find('('), size_t{120}));
      return std::string(n);
    };
    std::string names;
    for (const auto& [k, u] : unfused | ranges::views::take(3) | ranges::views::enumerate)
      names += fmt::format("{}`{}` ({}, ×{})", k ? "; " : "", readable(u.name), format_ns(u.ns), u.count);
    Finding f = make_finding(
        "Unfused elementwise kernels dominate the GPU time",
        FindingScope::of_trace(trace_id).on_device(dev.device_id).over_iterations_seen(first_iter, last_iter));
    f.problem = fmt::format(
        "On GPU {}, {} unfused elementwise kernels take {} of the {} kernel time ({}), more than the "
        "GEMM, convolution and attention kernels together ({}). Each one streams its tensors through device memory "
        "on its own; a fused chain would read and write them once. Largest: {}.",
        dev.device_id, unfused_count, format_ns(unfused_ns), format_ns(dev.kernel_time_ns), format_percent(share),
        format_ns(matmul_ns), names);
    f.recommendation =
        "Fuse the elementwise chains: `model = torch.compile(model)` (Inductor emits one vectorised kernel per "
        "chain of pointwise ops and reductions), fused modules and kernels for the common patterns (fused RMSNorm/"
        "LayerNorm, fused rotary embedding, `torch.nn.functional.scaled_dot_product_attention`, fused SwiGLU/GELU), "
        "and for inference a serving engine that ships them (vLLM, TensorRT-LLM). Avoid dtype casts and "
        "`.contiguous()` copies between ops; generic `elementwise_kernel` instances with a small vector width often "
        "come from non-contiguous or mixed-dtype inputs. TensorFlow: `@tf.function(jit_compile=True)`.";
    f.estimated_savings_ns =
        static_cast<int64_t>(static_cast<double>(unfused_ns) * (1.0 - 1.0 / memory_fusion_factor_));
    f.savings_method = fmt::format(
        "kernel time of the unfused elementwise kernels x (1 - 1/{:.1f}), assuming fusion cuts their "
        "device-memory traffic by memory_fusion_factor",
        memory_fusion_factor_);
    f.confidence = 0.4;
    f.evidence["unfused_kernels"] = unfused_count;
    f.evidence["unfused_kernel_time_ns"] = unfused_ns;
    f.evidence["matmul_kernel_time_ns"] = matmul_ns;
    f.evidence["kernel_time_ns"] = dev.kernel_time_ns;
    auto top = nlohmann::ordered_json::array();
    for (const Named& u : unfused | ranges::views::take(top_))
      top.push_back({{"kernel", u.name}, {"time_ns", u.ns}, {"count", u.count}});
    f.evidence["top_kernels"] = std::move(top);
    f.evidence["example_kernel_id"] = unfused.front().example;
    sink.report(std::move(f));
  }

  int64_t max_kernel_ns_, max_gap_ns_, min_run_;
  double fusion_factor_, min_share_;
  size_t top_;
  double min_elementwise_share_, memory_fusion_factor_;
};

}  // namespace

DetectorInfo no_fusion_info() {
  return {
      "no-fusion",
      {{"max_kernel_ns", 10000, "elementwise/reduction kernels at most this long count as tiny"},
       {"max_gap_ns", 50000, "a run continues while the next tiny kernel starts within this gap on the same stream"},
       {"min_run", 16, "runs shorter than this many kernels are ignored"},
       {"fusion_factor", 4.0, "assumed number of tiny kernels fusion merges into one"},
       {"min_share", 0.03, "report when the runs span at least this share of wall time"},
       {"top", 5, "ops named in the finding"},
       {"min_elementwise_share", 0.5,
        "also report when unfused elementwise kernels take at least this share of kernel time (and more "
        "than GEMM, convolution and attention together)"},
       {"memory_fusion_factor", 2.0,
        "assumed cut in device-memory traffic when those memory-bound kernels are fused"}},
      [](const OptionValues& o) { return std::make_unique<NoFusion>(o); }};
}

}  // namespace proflint
