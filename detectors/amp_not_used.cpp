// detectors/amp_not_used.cpp — amp-not-used
// Flags GEMM/convolution/attention ops that could run on Tensor Cores but ran FP32 kernels on CUDA
// cores, on a GPU that has Tensor Cores (mixed precision / TF32 not enabled).
// Docs: docs/detectors/amp-not-used.md
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/source_sites.hpp"
#include "engine/common/format.hpp"

namespace proflint {

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Kernel names are long C++ signatures; the text shows `ns::name<args…>` cut to a readable length
// (the evidence keeps the full name).
std::string short_kernel(std::string_view name, size_t max_len = 140) {
  if (name.starts_with("void ")) name.remove_prefix(5);
  if (size_t p = name.find('('); p != std::string_view::npos && p > 0) name = name.substr(0, p);
  std::string s(name);
  if (s.size() > max_len) s = s.substr(0, max_len - 2) + "…";
  return s;
}

// First tensor dtype of a Kineto 'Input type' list (["float", "float", "Scalar"] -> "float").
std::optional<std::string> first_dtype(const std::string& json) {
  static const std::set<std::string_view> not_dtypes = {"",     "Scalar", "ScalarList", "TensorList", "GenericList",
                                                        "Int",  "Bool",   "Device",     "Layout",     "ScalarType",
                                                        "None", "String", "IntList"};
  size_t i = 0;
  while ((i = json.find('"', i)) != std::string::npos) {
    size_t j = json.find('"', i + 1);
    if (j == std::string::npos) break;
    std::string item = json.substr(i + 1, j - i - 1);
    i = j + 1;
    if (!not_dtypes.contains(item)) return item;
  }
  return std::nullopt;
}

// The number formed by a run of exactly 2 or 3 digits starting at `pos` of `l` (the run must end
// there), or 0. Hand-written instead of std::regex: kernel names reach 10^6 characters and
// libstdc++'s regex recurses per character.
int two_or_three_digits_at(const std::string& l, size_t pos) {
  size_t end = pos;
  while (end < l.size() && std::isdigit(static_cast<unsigned char>(l[end]))) ++end;
  if (end - pos < 2 || end - pos > 3) return 0;
  return std::stoi(l.substr(pos, end - pos));
}

// The lowest architecture (as 70, 75, 80, 90, 100 ...) that a kernel name proves the GPU to be at
// least: kernels compiled for an architecture only run on it and its successors. 0 when the name
// says nothing. Reads the first 'sm80' / 'sm_90' token (not preceded by a letter or digit) and the
// first 'cutlass_80_' token.
int arch_from_kernel_name(const std::string& name) {
  std::string l = lower(name);
  int arch = 0;
  for (size_t p = l.find("sm"); p != std::string::npos; p = l.find("sm", p + 1)) {
    if (p > 0 && std::isalnum(static_cast<unsigned char>(l[p - 1]))) continue;
    size_t digits = p + 2;
    if (digits < l.size() && l[digits] == '_') ++digits;
    if (int a = two_or_three_digits_at(l, digits)) {
      arch = std::max(arch, a);
      break;
    }
  }
  for (size_t p = l.find("cutlass_"); p != std::string::npos; p = l.find("cutlass_", p + 1)) {
    size_t digits = p + 8, end = digits;
    while (end < l.size() && std::isdigit(static_cast<unsigned char>(l[end]))) ++end;
    int a = two_or_three_digits_at(l, digits);
    if (a && end < l.size() && l[end] == '_') {
      arch = std::max(arch, a);
      break;
    }
  }
  static const std::pair<std::string_view, int> families[] = {{"volta_", 70},  {"turing_", 75}, {"ampere_", 80},
                                                              {"hopper_", 90}, {"nvjet", 90},   {"blackwell_", 100}};
  for (const auto& [word, a] : families)
    if (l.find(word) != std::string::npos) arch = std::max(arch, a);
  return arch;
}

class AmpNotUsed final : public Detector {
 public:
  explicit AmpNotUsed(const OptionValues& o)
      : expected_speedup_(std::max(1.0, o.number("expected_speedup"))),
        min_kernel_share_(o.number("min_kernel_share")),
        min_wall_share_(o.number("min_wall_share")),
        min_savings_ns_(o.integer("min_savings_ns")),
        top_(static_cast<size_t>(std::max<int64_t>(1, o.integer("top")))) {}

  std::string_view id() const override { return "amp-not-used"; }
  std::string_view title() const override { return "Tensor-Core-eligible ops run in FP32 without Tensor Cores"; }
  std::vector<std::string> needs() const override { return {"kernels", "ops"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* summary = facts.summary(trace_id);
    if (!summary || summary->wall_ns <= 0) return;
    auto& db = facts.db();

    std::optional<std::string> trace_vendor;
    {
      SQLite::Statement q(db, "SELECT vendor FROM trace WHERE trace_id = ?");
      q.bind(1, trace_id);
      if (q.executeStep() && !q.isColumnNull(0)) trace_vendor = q.getColumn(0).getString();
    }
    bool trace_has_tc_kernels = false;
    {
      SQLite::Statement q(db, "SELECT 1 FROM _kernel WHERE trace_id = ? AND is_tensor_core = 1 LIMIT 1");
      q.bind(1, trace_id);
      trace_has_tc_kernels = q.executeStep();
    }

    for (const DeviceSummary& dev : summary->devices) {
      if (dev.tc_eligible_not_used_ns <= 0 || dev.kernel_time_ns <= 0) continue;
      std::optional<std::string> vendor = trace_vendor;
      {
        SQLite::Statement q(db, "SELECT vendor FROM device WHERE trace_id = ? AND device_id = ?");
        q.bind(1, trace_id);
        q.bind(2, dev.device_id);
        if (q.executeStep() && !q.isColumnNull(0)) vendor = q.getColumn(0).getString();
      }
      // AMD matrix cores and other accelerators follow other rules (and other fixes).
      if (vendor && *vendor != "nvidia") continue;

      // Does this GPU have Tensor Cores? The compute capability says so; without one, only kernels
      // that prove the architecture (or Tensor Core kernels elsewhere in the trace) count.
      int arch = 0;
      std::string arch_source;
      if (dev.compute_major) {
        arch = *dev.compute_major * 10 + dev.compute_minor.value_or(0);
        arch_source = fmt::format("compute capability {}.{}", *dev.compute_major, dev.compute_minor.value_or(0));
      } else {
        std::string example;
        SQLite::Statement q(db,
                            "SELECT value FROM string WHERE id IN "
                            "(SELECT DISTINCT name_id FROM _kernel WHERE trace_id = ? AND device_id IS ?)");
        q.bind(1, trace_id);
        q.bind(2, dev.device_id);
        while (q.executeStep()) {
          std::string name = q.getColumn(0).getString();
          int a = arch_from_kernel_name(name);
          if (a > arch) {
            arch = a;
            example = name;
          }
        }
        if (arch > 0) {
          arch_source = fmt::format("sm{}+ inferred from kernel names such as {}", arch, short_kernel(example, 40));
        } else if (trace_has_tc_kernels) {
          arch = 70;
          arch_source = "inferred: other kernels of this trace use Tensor Cores";
        }
      }
      if (arch < 70) continue;
      bool cc_known = dev.compute_major.has_value();

      int64_t eligible_ns = dev.tc_eligible_not_used_ns;
      double kernel_share = static_cast<double>(eligible_ns) / static_cast<double>(dev.kernel_time_ns);
      if (kernel_share < min_kernel_share_) {
        sink.below_threshold(checked_below(*this, trace_id, dev.device_id,
                                           "share of kernel time in Tensor-Core-eligible kernels not on Tensor Cores",
                                           kernel_share, min_kernel_share_, "share"));
        continue;
      }
      // Amdahl bound: summed kernel time may overlap across streams, and only the GPU-busy part of the
      // wall can shrink; the eligible kernels own their share of the (flattened) busy time.
      int64_t critical_ns =
          std::min<int64_t>(eligible_ns, static_cast<int64_t>(kernel_share * static_cast<double>(dev.kernel_busy_ns)));
      // Only the steady state counts (docs/derivation.md "Start-up and steady state"): the kernels of a
      // warm-up iteration would be saved once, not every step. Scaled by the steady span's share of
      // the kernel busy time, assuming the same kernel mix.
      if (dev.startup_ns > 0 && dev.kernel_busy_ns > 0)
        critical_ns = static_cast<int64_t>(static_cast<double>(critical_ns) *
                                           static_cast<double>(dev.steady_kernel_busy_ns) /
                                           static_cast<double>(dev.kernel_busy_ns));
      auto savings = static_cast<int64_t>(static_cast<double>(critical_ns) * (1.0 - 1.0 / expected_speedup_));
      // min_wall_share and min_savings_ns are applied by ranking, which lists a finding under them
      // as "checked, below threshold" with its estimate instead of dropping it.

      // One pass over the eligible non-Tensor-Core kernels gives the top ops, the top kernels, the
      // count, the iteration range and the examples (four queries over the same join before).
      // Rows are grouped on ids; names are joined once per group. The op and kernel tables below
      // read through the kernel and op views, whose joins drop rows without a name: so do they.
      struct Group {
        int64_t ns = 0, kernels = 0;
      };
      // (op name id, input types id or -1, kernel name id)
      std::map<std::tuple<int64_t, std::optional<int64_t>, int64_t>, Group> groups;
      int64_t count = 0;
      std::optional<int64_t> first_iter, last_iter;
      std::vector<std::pair<int64_t, int64_t>> longest;  // (dur_ns, kernel id), the 3 longest
      // Backward ops (autograd nodes) record no input types: they take those of the forward op
      // that created them, the first range with the same autograd sequence number that recorded
      // types. (Kineto's "Fwd thread id" numbers the profiler's own threads, not the OS thread id
      // the store keeps, so it cannot narrow the match; the counter is per thread and only
      // DataParallel-style replica threads could repeat a number.)
      SourceSites sites(facts, trace_id, "GPU time");  // where the non-Tensor-Core GEMMs are called
      {
        struct Row {
          int64_t kid, dur, kname, oname;
          std::optional<int64_t> iteration, types, seq;
        };
        std::vector<Row> rows;
        std::set<int64_t> seqs;
        SQLite::Statement q(db,
                            "SELECT k.id, k.dur_ns, k.iteration, k.name_id, o.name_id, r.input_types_id, "
                            "r.sequence_number "
                            "FROM _kernel k JOIN _op o ON o.id = k.tc_eligible_op_id "
                            "LEFT JOIN _range r ON r.id = o.range_id "
                            "WHERE k.trace_id = ? AND k.device_id IS ? AND k.is_tensor_core = 0 "
                            "AND k.category IN ('gemm', 'conv', 'attention')");
        q.bind(1, trace_id);
        q.bind(2, dev.device_id);
        while (q.executeStep()) {
          rows.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64(), q.getColumn(3).getInt64(),
                          q.getColumn(4).getInt64(), nullable_int(q.getColumn(2)),
                          nullable_int(q.getColumn(5)), nullable_int(q.getColumn(6))});
          if (!rows.back().types && rows.back().seq) seqs.insert(*rows.back().seq);
        }
        // sequence number -> input types of the first range recording them.
        std::map<int64_t, int64_t> forward_types;
        if (!seqs.empty()) {
          SQLite::Statement f(db,
                              "SELECT sequence_number, input_types_id FROM _range WHERE trace_id = ? AND "
                              "sequence_number IS NOT NULL AND input_types_id IS NOT NULL ORDER BY start_ns, id");
          f.bind(1, trace_id);
          while (f.executeStep()) {
            int64_t seq = f.getColumn(0).getInt64();
            if (seqs.count(seq)) forward_types.try_emplace(seq, f.getColumn(1).getInt64());
          }
        }
        for (auto& r : rows)
          if (!r.types && r.seq)
            if (auto it = forward_types.find(*r.seq); it != forward_types.end()) r.types = it->second;
        for (const auto& r : rows) {
          int64_t kid = r.kid, dur = r.dur;
          ++count;
          sites.add_kernel(kid, dur);
          if (r.iteration) {
            int64_t it = *r.iteration;
            first_iter = first_iter ? std::min(*first_iter, it) : it;
            last_iter = last_iter ? std::max(*last_iter, it) : it;
          }
          std::pair<int64_t, int64_t> ex{dur, kid};
          auto before = [](const auto& a, const auto& b) {
            return a.first > b.first || (a.first == b.first && a.second < b.second);
          };
          if (longest.size() < 3 || before(ex, longest.back())) {
            longest.insert(std::upper_bound(longest.begin(), longest.end(), ex, before), ex);
            if (longest.size() > 3) longest.pop_back();
          }
          auto& g = groups[{r.oname, r.types, r.kname}];
          g.ns += dur;
          ++g.kernels;
        }
      }
      std::map<int64_t, std::optional<std::string>> names;
      SQLite::Statement name_q(db, "SELECT value FROM string WHERE id = ?");
      auto name_of = [&](int64_t id) -> const std::optional<std::string>& {
        auto it = names.find(id);
        if (it != names.end()) return it->second;
        name_q.reset();
        name_q.bind(1, id);
        std::optional<std::string> v;
        if (name_q.executeStep()) v = name_q.getColumn(0).getString();
        return names.emplace(id, std::move(v)).first->second;
      };

      // Top ops, with the dtypes recorded for them.
      struct OpAgg {
        int64_t ns = 0, kernels = 0;
        std::set<std::string> dtypes;
        bool untyped = false;  // some of its kernels' ops (and their forward ops) recorded no input types
      };
      std::map<std::string, OpAgg> ops;
      std::map<int64_t, Group> by_kernel;
      for (const auto& [key, g] : groups) {
        const auto& [op_name, types, kernel_name] = key;
        if (!name_of(op_name) || !name_of(kernel_name)) continue;
        auto& a = ops[*name_of(op_name)];
        a.ns += g.ns;
        a.kernels += g.kernels;
        if (types && name_of(*types)) {
          if (auto d = first_dtype(*name_of(*types))) a.dtypes.insert(*d);
        } else {
          a.untyped = true;
        }
        auto& k = by_kernel[kernel_name];
        k.ns += g.ns;
        k.kernels += g.kernels;
      }
      std::vector<std::pair<std::string, OpAgg>> op_list(ops.begin(), ops.end());
      std::stable_sort(op_list.begin(), op_list.end(),
                       [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
      std::set<std::string> all_dtypes;
      for (const auto& [name, a] : op_list) all_dtypes.insert(a.dtypes.begin(), a.dtypes.end());

      struct KernelAgg {
        std::string name;
        int64_t ns = 0, count = 0;
      };
      // By time, then name (ORDER BY 2 DESC, 1), then name id (the GROUP BY's order).
      std::vector<KernelAgg> kernels;
      for (const auto& [name_id, g] : by_kernel) kernels.push_back({*name_of(name_id), g.ns, g.kernels});
      std::stable_sort(kernels.begin(), kernels.end(), [](const KernelAgg& a, const KernelAgg& b) {
        return a.ns > b.ns || (a.ns == b.ns && a.name < b.name);
      });
      if (kernels.size() > top_) kernels.resize(top_);
      std::vector<int64_t> examples;
      for (const auto& [dur, kid] : longest) examples.push_back(kid);

      std::string gpu =
          dev.name.empty() ? fmt::format("GPU {}", dev.device_id) : fmt::format("GPU {} ({})", dev.device_id, dev.name);
      std::string op_text;
      for (size_t i = 0; i < op_list.size() && i < top_; ++i) {
        const auto& [name, a] = op_list[i];
        std::string dt;
        for (const auto& d : a.dtypes) dt += (dt.empty() ? "" : "/") + d;
        op_text += fmt::format("{}{} {}{}", i ? ", " : "", name, format_ns(a.ns),
                               !dt.empty() ? " [" + dt + "]" : a.untyped ? " [dtypes not recorded]" : "");
      }
      std::string kernel_text;
      for (size_t i = 0; i < kernels.size(); ++i)
        kernel_text += fmt::format("{}{} ×{} {}", i ? ", " : "", short_kernel(kernels[i].name), kernels[i].count,
                                   format_ns(kernels[i].ns));

      Finding f = make_finding(FindingScope::of_trace(trace_id)
                                   .on_device(dev.device_id)
                                   .over_iterations_seen(first_iter.value_or(-1), last_iter.value_or(-1)));
      f.min_savings_ns = min_savings_ns_;
      f.min_wall_share = min_wall_share_;
      bool xmma_ffma = std::any_of(kernels.begin(), kernels.end(), [](const KernelAgg& k) {
        return k.name.find("xmma") != std::string::npos && k.name.find("ffma") != std::string::npos;
      });
      f.problem = fmt::format(
          "On {}, {} of GEMM/convolution kernel time ({} of all kernel time, {} kernels) belongs to "
          "Tensor-Core-eligible ops but ran "
          "on CUDA cores, not Tensor Cores, although the GPU has them ({}){}. Top ops: {}. Top kernels: {}.{}",
          gpu, format_ns(eligible_ns), format_percent(kernel_share), count, arch_source,
          dev.tensor_core_time_ns > 0
              ? fmt::format("; {} of kernel time already uses Tensor Cores", format_percent(dev.tensor_core_share))
              : std::string(all_dtypes == std::set<std::string>{"float"} ? "; their inputs are FP32 (float)" : ""),
          op_text, kernel_text,
          xmma_ffma ? " (Kernels named `xmma` with `ffma` run an FP32 FMA main loop: they are not Tensor Core kernels.)"
                    : "");

      bool ampere = arch >= 80;
      std::string rec;
      if (ampere) {
        rec =
            "Run the forward pass and loss under mixed precision: in PyTorch wrap them in "
            "`with torch.autocast(\"cuda\", dtype=torch.bfloat16):` (bf16 needs no loss scaling on Ampere and newer); "
            "without code changes to the model, enable TF32 for FP32 matmuls and convolutions with "
            "`torch.backends.cuda.matmul.allow_tf32 = True` and `torch.backends.cudnn.allow_tf32 = True` "
            "(or `torch.set_float32_matmul_precision(\"high\")`). TensorFlow/Keras: "
            "`tf.keras.mixed_precision.set_global_policy(\"mixed_bfloat16\")` (or \"mixed_float16\"); TF32 is on by "
            "default.";
      } else {
        rec =
            "Run the forward pass and loss under mixed precision: in PyTorch wrap them in "
            "`with torch.autocast(\"cuda\", dtype=torch.float16):` and scale the loss with `scaler = "
            "torch.cuda.amp.GradScaler()` "
            "(`scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()`) — this GPU has FP16 Tensor "
            "Cores but no "
            "BF16/TF32. TensorFlow/Keras: `tf.keras.mixed_precision.set_global_policy(\"mixed_float16\")`.";
      }
      if (dev.tensor_core_time_ns > 0)
        rec +=
            " Part of the model already uses Tensor Cores: move the ops listed above inside the autocast region (or "
            "remove "
            "explicit `.float()` casts around them).";
      f.recommendation = rec;
      f.estimated_savings_ns = savings;
      f.savings_method = fmt::format(
          "eligible FP32 kernel time, bounded by its share of the flattened GPU busy time, x (1 - 1/{:.1f}), the "
          "assumed speed-up "
          "of FP16/BF16 Tensor Core GEMMs and convolutions over FP32 CUDA-core ones",
          expected_speedup_);
      f.confidence = !cc_known ? 0.6 : (all_dtypes.empty() ? 0.7 : 0.8);
      f.evidence["eligible_non_tc_kernel_ns"] = eligible_ns;
      f.evidence["eligible_non_tc_kernels"] = count;
      f.evidence["kernel_time_ns"] = dev.kernel_time_ns;
      f.evidence["share_of_kernel_time"] = kernel_share;
      f.evidence["kernel_busy_ns"] = dev.kernel_busy_ns;
      f.evidence["tensor_core_share"] = dev.tensor_core_share;
      f.evidence["tensor_cores_from"] = arch_source;
      auto top_ops = nlohmann::ordered_json::array();
      for (size_t i = 0; i < op_list.size() && i < top_; ++i) {
        nlohmann::ordered_json o;
        o["op"] = op_list[i].first;
        o["gpu_time_ns"] = op_list[i].second.ns;
        o["kernels"] = op_list[i].second.kernels;
        o["dtypes"] = op_list[i].second.dtypes;
        // Why a list can be empty: neither the op nor, for a backward op, the forward op with its
        // autograd sequence number recorded input types (record_shapes=False, or no forward op).
        if (op_list[i].second.dtypes.empty() && op_list[i].second.untyped) o["dtypes_unknown"] = "input types not recorded";
        top_ops.push_back(std::move(o));
      }
      f.evidence["top_ops"] = std::move(top_ops);
      auto top_kernels = nlohmann::ordered_json::array();
      for (const auto& k : kernels) {
        nlohmann::ordered_json o;
        o["kernel"] = k.name;
        o["time_ns"] = k.ns;
        o["count"] = k.count;
        top_kernels.push_back(std::move(o));
      }
      f.evidence["top_kernels"] = std::move(top_kernels);
      f.evidence["example_kernel_ids"] = examples;
      attach_locations(f, sites.top(3));
      sink.report(std::move(f));
    }
  }

 private:
  double expected_speedup_;
  double min_kernel_share_;
  double min_wall_share_;
  int64_t min_savings_ns_;
  size_t top_;
};

}  // namespace

DetectorInfo amp_not_used_info() {
  return {"amp-not-used",
          {{"expected_speedup", 2.0,
            "assumed speed-up of FP16/BF16 Tensor Core GEMMs/convolutions over FP32 CUDA-core ones"},
           {"min_kernel_share", 0.10,
            "report when eligible non-Tensor-Core kernels take at least this share of the GPU's kernel time"},
           {"min_wall_share", 0.002, "and when the estimated saving is at least this share of wall time"},
           {"min_savings_ns", 100000, "and when the estimated saving is at least this many nanoseconds"},
           {"top", 5, "ops and kernels named in the finding"}},
          [](const OptionValues& o) { return std::make_unique<AmpNotUsed>(o); }};
}

}  // namespace proflint
