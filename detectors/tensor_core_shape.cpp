// detectors/tensor_core_shape.cpp — tensor-core-shape
// Flags FP16/BF16 (INT8/FP8) GEMM and convolution ops whose dimensions are not multiples of 8 (16):
// cuBLAS/cuDNN then fall back to unaligned kernels or pad tiles, wasting Tensor Core throughput.
// Docs: docs/detectors/tensor-core-shape.md
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/source_sites.hpp"
#include "engine/common/format.hpp"

namespace proflint {

namespace {

// One GEMM/conv dimension that sets a leading dimension or a channel count.
struct Dim {
  std::string label;  // 'K', 'N', 'C_in', 'C_out'
  int64_t value = 0;
};

std::vector<int64_t> shape_at(const nlohmann::json& dims, size_t i) {
  std::vector<int64_t> out;
  if (!dims.is_array() || i >= dims.size() || !dims[i].is_array()) return out;
  for (const auto& v : dims[i]) {
    if (!v.is_number_integer()) return {};
    out.push_back(v.get<int64_t>());
  }
  return out;
}

// The dimensions Tensor Cores care about, from the op's recorded input shapes. For GEMMs those are
// K (the reduction, leading dimension of both operands) and N (leading dimension of B and of the
// output); M (rows: batch x tokens) only changes tile quantization and is left alone. For
// convolutions, input and output channels (groups = 1 only).
std::vector<Dim> tensor_core_dims(std::string_view op_type, const nlohmann::json& dims) {
  auto gemm = [](const std::vector<int64_t>& a, const std::vector<int64_t>& b) -> std::vector<Dim> {
    if (a.size() < 2 || b.size() < 2) return {};
    int64_t k = a.back(), kb = b[b.size() - 2], n = b.back();
    if (k != kb) return {};
    return {{"K", k}, {"N", n}};
  };
  if (op_type == "mm" || op_type == "bmm" || op_type == "_scaled_mm" || op_type == "_int_mm" || op_type == "matmul")
    return gemm(shape_at(dims, 0), shape_at(dims, 1));
  if (op_type == "addmm" || op_type == "baddbmm" || op_type == "addbmm" || op_type == "_addmm_activation")
    return gemm(shape_at(dims, 1), shape_at(dims, 2));
  if (op_type == "linear") {
    auto x = shape_at(dims, 0), w = shape_at(dims, 1);
    if (x.empty() || w.size() != 2 || x.back() != w[1]) return {};
    return {{"K", w[1]}, {"N", w[0]}};
  }
  static const std::unordered_set<std::string_view> conv = {
      "conv1d", "conv2d", "conv3d", "convolution", "_convolution", "cudnn_convolution", "_convolution_mode"};
  static const std::unordered_set<std::string_view> conv_t = {"conv_transpose1d", "conv_transpose2d",
                                                              "conv_transpose3d", "cudnn_convolution_transpose"};
  std::vector<int64_t> x, w;
  bool transposed = false;
  if (conv.contains(op_type)) {
    x = shape_at(dims, 0);
    w = shape_at(dims, 1);
  } else if (conv_t.contains(op_type)) {
    x = shape_at(dims, 0);
    w = shape_at(dims, 1);
    transposed = true;
  } else if (op_type == "convolution_backward" || op_type == "cudnn_convolution_backward") {
    x = shape_at(dims, 1);
    w = shape_at(dims, 2);
  } else {
    return {};
  }
  if (x.size() < 3 || w.size() != x.size()) return {};
  if (!transposed) {
    if (w[1] != x[1]) return {};  // grouped / depthwise: per-group channels follow other rules
    return {{"C_in", x[1]}, {"C_out", w[0]}};
  }
  if (w[0] != x[1]) return {};
  return {{"C_in", x[1]}, {"C_out", w[1]}};
}

// Required multiple for the op's first tensor dtype: 8 for FP16/BF16, 16 for INT8/FP8; nullopt for
// FP32/FP64 and unknown types (FP32 is amp-not-used's business).
std::optional<int64_t> required_multiple(const std::string& types_json, int64_t half_multiple, int64_t byte_multiple) {
  static const std::unordered_set<std::string_view> half = {"c10::Half", "half", "c10::BFloat16", "bfloat16",
                                                            "float16"};
  static const std::unordered_set<std::string_view> byte = {"signed char",          "int8",
                                                            "c10::qint8",           "c10::quint8",
                                                            "c10::Float8_e4m3fn",   "c10::Float8_e5m2",
                                                            "c10::Float8_e4m3fnuz", "c10::Float8_e5m2fnuz"};
  static const std::unordered_set<std::string_view> skip = {"",    "Scalar", "ScalarList", "TensorList", "GenericList",
                                                            "Int", "Bool",   "None",       "String",     "IntList"};
  size_t i = 0;
  while ((i = types_json.find('"', i)) != std::string::npos) {
    size_t j = types_json.find('"', i + 1);
    if (j == std::string::npos) break;
    std::string item = types_json.substr(i + 1, j - i - 1);
    i = j + 1;
    if (skip.contains(item)) continue;
    if (half.contains(item)) return half_multiple;
    if (byte.contains(item)) return byte_multiple;
    return std::nullopt;
  }
  return std::nullopt;
}

std::string dtype_family(int64_t multiple, int64_t half_multiple) {
  return multiple == half_multiple ? "FP16/BF16" : "INT8/FP8";
}

class TensorCoreShape final : public Detector {
 public:
  explicit TensorCoreShape(const OptionValues& o)
      : half_multiple_(std::max<int64_t>(1, o.integer("half_multiple"))),
        byte_multiple_(std::max<int64_t>(1, o.integer("int8_multiple"))),
        min_dim_(o.integer("min_dim")),
        recoverable_(std::clamp(o.number("recoverable_fraction"), 0.0, 1.0)),
        min_kernel_share_(o.number("min_kernel_share")),
        min_savings_ns_(o.integer("min_savings_ns")),
        top_(static_cast<size_t>(std::max<int64_t>(1, o.integer("top")))) {}

  std::string_view id() const override { return "tensor-core-shape"; }
  std::string_view title() const override { return "GEMM/convolution shapes are not Tensor Core friendly"; }
  std::vector<std::string> needs() const override { return {"kernels", "ops", "op_shapes", "op_dtypes"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* summary = facts.summary(trace_id);
    if (!summary || summary->wall_ns <= 0) return;
    int64_t kernel_time = 0, kernel_busy = 0;
    for (const auto& d : summary->devices) {
      kernel_time += d.kernel_time_ns;
      kernel_busy += d.kernel_busy_ns;
    }
    if (kernel_time <= 0) return;
    auto& db = facts.db();

    struct Flagged {
      int64_t id, parent, gpu_ns, tc_ns, iteration;
      std::string name;
      std::vector<std::pair<Dim, int64_t>> bad;  // dimension and its padded size
      int64_t multiple;
    };
    std::unordered_map<int64_t, Flagged> flagged;
    SQLite::Statement q(db,
                        "SELECT o.id, o.parent_id, o.name, o.op_type, o.input_dims, o.input_types, o.gpu_time_ns, "
                        "o.tc_time_ns, o.iteration "
                        "FROM op o WHERE o.trace_id = ? AND o.gpu_time_ns > 0 AND (o.tc_eligible = 1 OR o.id IN "
                        "(SELECT op_id FROM _kernel WHERE trace_id = ? AND tc_eligible_op_id IS NOT NULL)) "
                        "AND o.input_dims IS NOT NULL AND o.input_types IS NOT NULL");
    // Eligibility is marked on the outermost eligible op only (aten::linear, ConvolutionBackward0);
    // the ops inside it that launch the kernels (addmm, convolution_backward) carry the shapes
    // some of the checks read, so they are looked at too; the nest is reduced below.
    q.bind(1, trace_id);
    q.bind(2, trace_id);
    // Shapes repeat every iteration: parse each distinct (type, dims, types) once.
    std::map<std::tuple<std::string, std::string, std::string>,
             std::pair<std::vector<std::pair<Dim, int64_t>>, int64_t>>
        cache;
    while (q.executeStep()) {
      std::string op_type = q.getColumn(3).getString();
      std::string dims_json = q.getColumn(4).getString();
      std::string types_json = q.getColumn(5).getString();
      auto key = std::make_tuple(op_type, dims_json, types_json);
      auto it = cache.find(key);
      if (it == cache.end()) {
        std::vector<std::pair<Dim, int64_t>> bad;
        int64_t multiple = 0;
        if (auto m = required_multiple(types_json, half_multiple_, byte_multiple_); m && *m > 0) {
          multiple = *m;
          auto dims = nlohmann::json::parse(dims_json, nullptr, false);
          if (!dims.is_discarded()) {
            for (const auto& d : tensor_core_dims(op_type, dims)) {
              if (d.value < min_dim_ || d.value % multiple == 0) continue;
              // A dimension too close to INT64_MAX to round up is no real shape (a corrupt or edited file).
              if (d.value > std::numeric_limits<int64_t>::max() - (multiple - 1)) continue;
              bad.push_back({d, (d.value + multiple - 1) / multiple * multiple});
            }
          }
        }
        it = cache.emplace(key, std::make_pair(std::move(bad), multiple)).first;
      }
      if (it->second.first.empty()) continue;
      Flagged f;
      f.id = q.getColumn(0).getInt64();
      f.parent = q.isColumnNull(1) ? -1 : q.getColumn(1).getInt64();
      f.name = q.getColumn(2).getString();
      f.gpu_ns = q.getColumn(6).getInt64();
      f.tc_ns = q.isColumnNull(7) ? 0 : q.getColumn(7).getInt64();
      f.iteration = q.isColumnNull(8) ? -1 : q.getColumn(8).getInt64();
      f.bad = it->second.first;
      f.multiple = it->second.second;
      flagged.emplace(f.id, std::move(f));
    }
    if (flagged.empty()) return;

    // GPU time is inclusive (an op's kernels count for all its ancestors): keep only the outermost
    // flagged op of each nest, e.g. aten::linear and not also its aten::addmm.
    SQLite::Statement parent_of(db, "SELECT parent_id FROM _op WHERE id = ?");
    std::unordered_map<int64_t, int64_t> parents;
    auto parent = [&](int64_t id) -> int64_t {
      if (auto it = parents.find(id); it != parents.end()) return it->second;
      parent_of.reset();
      parent_of.bind(1, id);
      int64_t p = -1;
      if (parent_of.executeStep() && !parent_of.isColumnNull(0)) p = parent_of.getColumn(0).getInt64();
      parents.emplace(id, p);
      return p;
    };
    struct Group {
      std::string op, dims_text;
      int64_t multiple = 0, count = 0, gpu_ns = 0, tc_ns = 0, example = 0;
    };
    std::map<std::pair<std::string, std::string>, Group> groups;
    int64_t affected_ns = 0, affected_tc_ns = 0, ops_count = 0, first_iter = -1, last_iter = -1;
    SourceSites sites(facts, trace_id, "GPU time");
    for (const auto& [op_id, f] : flagged) {
      bool nested = false;
      int guard = 0;
      for (int64_t p = f.parent; p >= 0 && guard < 256; p = parent(p), ++guard) {
        if (flagged.contains(p)) {
          nested = true;
          break;
        }
      }
      if (nested) continue;
      sites.add_op(op_id, f.gpu_ns);
      std::string dims_text;
      for (const auto& [d, padded] : f.bad)
        dims_text += fmt::format("{}{}={} (pad to {})", dims_text.empty() ? "" : ", ", d.label, d.value, padded);
      auto& g = groups[{f.name, dims_text}];
      if (g.count == 0 || op_id < g.example) g.example = op_id;
      g.op = f.name;
      g.dims_text = dims_text;
      g.multiple = f.multiple;
      g.count += 1;
      g.gpu_ns += f.gpu_ns;
      g.tc_ns += f.tc_ns;
      affected_ns += f.gpu_ns;
      affected_tc_ns += f.tc_ns;
      ++ops_count;
      if (f.iteration >= 0) {
        first_iter = first_iter < 0 ? f.iteration : std::min(first_iter, f.iteration);
        last_iter = std::max(last_iter, f.iteration);
      }
    }
    double share = static_cast<double>(affected_ns) / static_cast<double>(kernel_time);
    if (share < min_kernel_share_) {
      sink.below_threshold(checked_below(*this, trace_id, std::nullopt,
                                         "share of kernel time in reduced-precision GEMM/convolution ops with unaligned dimensions",
                                         share, min_kernel_share_, "share"));
      return;
    }
    // Amdahl bound as in amp-not-used: the affected kernels own their share of the flattened busy time.
    auto critical = std::min<int64_t>(affected_ns, static_cast<int64_t>(share * static_cast<double>(kernel_busy)));
    auto savings = static_cast<int64_t>(recoverable_ * static_cast<double>(critical));
    // min_savings_ns is applied by ranking (listed as "checked, below threshold" when not met).

    std::vector<Group> list;
    for (auto& [k, g] : groups) list.push_back(g);
    std::stable_sort(list.begin(), list.end(), [](const Group& a, const Group& b) { return a.gpu_ns > b.gpu_ns; });
    std::string text;
    for (size_t i = 0; i < list.size() && i < top_; ++i)
      text += fmt::format("{}{} with {} [{} multiple of {}] ×{}, {}", i ? "; " : "", list[i].op, list[i].dims_text,
                          dtype_family(list[i].multiple, half_multiple_), list[i].multiple, list[i].count,
                          format_ns(list[i].gpu_ns));

    Finding f = make_finding(FindingScope::of_trace(trace_id)
                                 .on_device(summary->devices.size() == 1
                                                ? std::optional<int64_t>(summary->devices.front().device_id)
                                                : std::nullopt)
                                 .over_iterations_seen(first_iter, last_iter));
    f.min_savings_ns = min_savings_ns_;
    f.problem = fmt::format(
        "{} reduced-precision GEMM/convolution op calls ({} GPU time, {} of kernel time; {} of it in Tensor Core "
        "kernels) have a "
        "dimension that is not a multiple of the Tensor Core granule, so cuBLAS/cuDNN run unaligned or padded tiles: "
        "{}.",
        ops_count, format_ns(affected_ns), format_percent(share),
        format_percent(affected_ns > 0 ? static_cast<double>(affected_tc_ns) / static_cast<double>(affected_ns) : 0.0),
        text);
    f.recommendation = fmt::format(
        "Pad the listed dimensions up to a multiple of {} for FP16/BF16 ({} for INT8/FP8): choose hidden sizes, "
        "vocabulary sizes "
        "(e.g. `model.resize_token_embeddings(n, pad_to_multiple_of=64)` in Hugging Face), head counts x head dims and "
        "channel counts "
        "that are multiples of it, pad variable sequence lengths with `tokenizer(..., padding=True, "
        "pad_to_multiple_of={})`, and "
        "pad odd feature sizes with zero columns (`torch.nn.functional.pad`). The same rule applies in "
        "TensorFlow/Keras layer sizes "
        "and in CUDA code calling cuBLAS/cuDNN directly.",
        half_multiple_, byte_multiple_, half_multiple_);
    f.estimated_savings_ns = savings;
    f.savings_method = fmt::format(
        "GPU time of the affected ops, bounded by its share of the flattened GPU busy time, x {:.2f} "
        "(recoverable_fraction), the "
        "assumed share of that time lost to unaligned or padded Tensor Core tiles",
        recoverable_);
    f.confidence = affected_tc_ns * 2 < affected_ns ? 0.7 : 0.5;
    f.evidence["affected_op_calls"] = ops_count;
    f.evidence["affected_gpu_time_ns"] = affected_ns;
    f.evidence["affected_tensor_core_time_ns"] = affected_tc_ns;
    f.evidence["share_of_kernel_time"] = share;
    auto top = nlohmann::ordered_json::array();
    for (size_t i = 0; i < list.size() && i < top_; ++i) {
      nlohmann::ordered_json o;
      o["op"] = list[i].op;
      o["dims"] = list[i].dims_text;
      o["multiple"] = list[i].multiple;
      o["calls"] = list[i].count;
      o["gpu_time_ns"] = list[i].gpu_ns;
      o["example_op_id"] = list[i].example;
      top.push_back(std::move(o));
    }
    f.evidence["top_shapes"] = std::move(top);
    attach_locations(f, sites.top(5));
    sink.report(std::move(f));
  }

 private:
  int64_t half_multiple_, byte_multiple_, min_dim_;
  double recoverable_, min_kernel_share_;
  int64_t min_savings_ns_;
  size_t top_;
};

}  // namespace

DetectorInfo tensor_core_shape_info() {
  return {"tensor-core-shape",
          {{"half_multiple", 8, "FP16/BF16 dimensions should be multiples of this"},
           {"int8_multiple", 16, "INT8/FP8 dimensions should be multiples of this"},
           {"min_dim", 8, "dimensions smaller than this are not flagged (e.g. 3 RGB input channels)"},
           {"recoverable_fraction", 0.3, "assumed share of the affected ops' GPU time that padding recovers"},
           {"min_kernel_share", 0.01, "report when the affected ops take at least this share of kernel time"},
           {"min_savings_ns", 10000, "and when the estimated saving is at least this many nanoseconds"},
           {"top", 5, "shapes named in the finding"}},
          [](const OptionValues& o) { return std::make_unique<TensorCoreShape>(o); }};
}

}  // namespace proflint
