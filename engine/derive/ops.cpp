// engine/derive/ops.cpp — framework ops: names, markers, Tensor Core eligibility, the op tree.
#include "engine/derive/ops.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

#include "engine/common/ascii.hpp"
#include "engine/common/saturate.hpp"

namespace proflint {

namespace {

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool contains(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

// Namespaces whose 'ns::name' NVTX ranges are framework ops even without emit_nvtx's ", op_id =".
bool is_framework_namespace(std::string_view ns) {
  static const std::unordered_set<std::string_view> known = {
      "aten",     "prim",        "c10d",   "_c10d_functional", "torch",  "quantized", "cudnn", "mkldnn", "profiler",
      "autograd", "torchvision", "fbgemm", "xformers",         "triton", "inductor",  "vllm",  "c10",    "_C"};
  return known.contains(ns);
}

}  // namespace

std::string normalize_op_type(std::string_view name) {
  if (name.starts_with("autograd::engine::evaluate_function")) return "evaluate_function";
  if (size_t comma = name.find(','); comma != std::string_view::npos) name = name.substr(0, comma);  // emit_nvtx suffix
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  bool had_namespace = false;
  if (size_t ns = name.rfind("::"); ns != std::string_view::npos) {
    name = name.substr(ns + 2);
    had_namespace = true;
  }
  // 'add.Tensor' overload names: only when namespaced, so user labels like 'model.forward' stay.
  if (had_namespace) {
    if (size_t dot = name.find('.'); dot != std::string_view::npos && dot > 0) name = name.substr(0, dot);
  }
  std::string type(name);
  // Versioned autograd nodes: 'AddmmBackward0' -> 'AddmmBackward'.
  if (size_t b = type.rfind("Backward"); b != std::string::npos && b + 8 < type.size()) {
    bool digits = std::all_of(type.begin() + static_cast<std::ptrdiff_t>(b + 8), type.end(),
                              [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (digits) type.resize(b + 8);
  }
  // In-place mark: 'add_' -> 'add', but dunder names ('__and__') and a bare '_' stay.
  if (type.size() > 1 && type.back() == '_' && type[type.size() - 2] != '_') type.pop_back();
  return type;
}

std::optional<std::string> framework_op_from_nvtx(std::string_view text) {
  std::string_view head = text;
  std::string_view rest;
  if (size_t comma = text.find(", "); comma != std::string_view::npos) {
    head = text.substr(0, comma);
    rest = text.substr(comma);
  }
  while (!head.empty() && head.back() == ' ') head.remove_suffix(1);
  if (head.empty()) return std::nullopt;
  if (contains(rest, ", op_id = ") || contains(rest, ", seq = ") || contains(rest, ", sizes = "))
    return std::string(head);
  // 'ns::name' with a known framework namespace.
  size_t sep = head.find("::");
  if (sep == std::string_view::npos || sep == 0) return std::nullopt;
  if (!std::all_of(head.begin(), head.end(), [](char c) { return is_ident_char(c) || c == ':' || c == '.'; }))
    return std::nullopt;
  if (!is_framework_namespace(head.substr(0, sep))) return std::nullopt;
  return std::string(head);
}

std::optional<int64_t> profiler_step_number(std::string_view name) {
  constexpr std::string_view prefix = "ProfilerStep#";
  if (!name.starts_with(prefix) || name.size() == prefix.size()) return std::nullopt;
  int64_t n = 0;
  for (char c : name.substr(prefix.size())) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

bool is_optimizer_step(std::string_view name) {
  if (name.size() < 14) return false;
  return equals_ascii_nocase(name.substr(0, 14), "optimizer.step") && (name.size() == 14 || name[14] == '#');
}

MarkerKind classify_marker(std::string_view name) {
  if (profiler_step_number(name)) return MarkerKind::profiler_step;
  if (name.starts_with("Optimizer.") && contains(name, "#")) return MarkerKind::optimizer;  // step, zero_grad
  if (is_optimizer_step(name) || equals_ascii_nocase(name, "optimizer.zero_grad")) return MarkerKind::optimizer;
  if (contains(name, "enumerate(DataLoader)") || contains(name, "enumerate(DataPipe)") ||
      (contains(name, "DataLoader") && contains(name, "__next__")))
    return MarkerKind::dataloader;
  return MarkerKind::none;
}

bool is_backward_name(std::string_view name) {
  return contains(name, "Backward") || name.starts_with("autograd::engine::evaluate_function") ||
         contains(name, "AccumulateGrad");
}

bool is_tc_eligible_type(std::string_view t) {
  static const std::unordered_set<std::string_view> types = {
      // GEMM class
      "mm", "bmm", "addmm", "addmv", "addr", "addbmm", "baddbmm", "matmul", "linear", "mv", "chain_matmul",
      "linalg_multi_dot", "einsum", "tensordot", "_addmm_activation", "_scaled_mm", "_int_mm", "_grouped_mm",
      "_scaled_grouped_mm",
      // convolution
      "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
      "convolution", "_convolution", "_convolution_mode", "cudnn_convolution", "cudnn_convolution_transpose",
      "miopen_convolution", "miopen_convolution_transpose", "miopen_depthwise_convolution", "convolution_backward",
      "cudnn_convolution_backward", "cudnn_convolution_backward_input", "cudnn_convolution_backward_weight",
      "cudnn_convolution_transpose_backward", "cudnn_convolution_transpose_backward_input",
      "cudnn_convolution_transpose_backward_weight",
      // attention
      "scaled_dot_product_attention", "_native_multi_head_attention", "multi_head_attention_forward",
      // RNN cells and layers
      "lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell",
      "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell", "_cudnn_rnn", "_cudnn_rnn_backward", "miopen_rnn",
      // autograd nodes of the above (normalize_op_type drops the version digit)
      "MmBackward", "AddmmBackward", "BmmBackward", "AddbmmBackward", "BaddbmmBackward", "AddmvBackward", "MvBackward",
      "ConvolutionBackward", "CudnnConvolutionBackward", "CudnnConvolutionTransposeBackward",
      "ConvolutionBackwardOverrideable", "ScaledDotProductFlashAttentionBackward",
      "ScaledDotProductEfficientAttentionBackward", "ScaledDotProductCudnnAttentionBackward", "CudnnRnnBackward",
      "LinearBackward", "ScaledMmBackward"};
  if (types.contains(t)) return true;
  return t.starts_with("_scaled_dot_product_") || t.starts_with("_flash_attention") ||
         t.starts_with("_efficient_attention") || t.starts_with("_fused_sdp") || t.starts_with("_cudnn_attention");
}

std::optional<bool> dtype_allows_tensor_cores(std::string_view json) {
  static const std::unordered_set<std::string_view> yes = {"float",
                                                           "c10::Half",
                                                           "half",
                                                           "c10::BFloat16",
                                                           "bfloat16",
                                                           "float16",
                                                           "float32",
                                                           "signed char",
                                                           "int8",
                                                           "c10::qint8",
                                                           "c10::Float8_e4m3fn",
                                                           "c10::Float8_e5m2",
                                                           "c10::Float8_e4m3fnuz",
                                                           "c10::Float8_e5m2fnuz",
                                                           "c10::Float8_e8m0fnu",
                                                           "c10::Float4_e2m1fn_x2"};
  static const std::unordered_set<std::string_view> no = {"double",
                                                          "long int",
                                                          "long",
                                                          "int",
                                                          "bool",
                                                          "unsigned char",
                                                          "short int",
                                                          "short",
                                                          "int64",
                                                          "int32",
                                                          "int16",
                                                          "float64",
                                                          "c10::complex<float>",
                                                          "c10::complex<double>",
                                                          "c10::complex<c10::Half>",
                                                          "unsigned int",
                                                          "uint8",
                                                          "long long",
                                                          "unsigned long"};
  // The list is a JSON array of strings; scan the quoted items without a JSON parser.
  size_t i = 0;
  while ((i = json.find('"', i)) != std::string_view::npos) {
    size_t j = json.find('"', i + 1);
    if (j == std::string_view::npos) break;
    std::string_view item = json.substr(i + 1, j - i - 1);
    i = j + 1;
    if (yes.contains(item)) return true;
    if (no.contains(item)) return false;
    // Anything else ('', 'Scalar', 'ScalarList', 'TensorList', ...) is not a tensor dtype.
  }
  return std::nullopt;
}

bool is_tc_eligible(std::string_view op_type, std::optional<std::string_view> input_types_json) {
  if (!is_tc_eligible_type(op_type)) return false;
  if (!input_types_json) return true;
  return dtype_allows_tensor_cores(*input_types_json).value_or(true);
}

namespace {

// `text` cut to at most `n` bytes at a UTF-8 character boundary.
std::string_view utf8_prefix(std::string_view text, size_t n) {
  if (text.size() <= n) return text;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

// The label a range gives its path (PathTree::label): its name, or for names over
// kMaxPathLabelBytes the first bytes, "…#" and a digest of the whole name. Cached per name id: the
// tree looks each name up once, and a long name is hashed once.
int32_t path_label(TraceData& t, int64_t label_id, std::unordered_map<int64_t, int32_t>& labels) {
  auto it = labels.find(label_id);
  if (it != labels.end()) return it->second;
  const std::string& name = t.text(label_id);
  int32_t label = name.size() <= kMaxPathLabelBytes
                      ? t.op_paths.label(name)
                      : t.op_paths.label(std::string(utf8_prefix(name, kMaxPathLabelBytes - 20)) + "\u2026#" + path_digest(name));
  labels.emplace(label_id, label);
  return label;
}

bool is_path_kind(RangeKind k) { return k != RangeKind::python_function && k != RangeKind::gpu_user_annotation; }

struct Frame {
  int64_t range = -1;
  int64_t op = -1;          // nearest op at or above this frame
  int64_t path_frame = -1;  // index in the stack of the nearest path node at or above (-1: none)
  int32_t path_node = PathTree::kTop;  // set for path nodes: its node in TraceData::op_paths
  bool in_optimizer = false, in_dataloader = false, in_backward = false;
  std::unordered_map<int64_t, int32_t> child_counts;
};

}  // namespace

void classify_ranges(TraceData& t) {
  size_t framework_ops = 0;
  for (auto& r : t.ranges) {
    const std::string& name = t.text(r.name_id);
    r.marker = classify_marker(name);
    // Kineto marks backward ops with the forward op's thread ('Fwd thread id'); forward ops carry
    // 'Fwd thread id': 0, so only a non-zero value means backward.
    const int64_t fwd_thread = t.args(r).fwd_thread_id;
    r.backward_name = is_backward_name(name) || (fwd_thread != kNone && fwd_thread != 0);
    r.op_candidate = false;
    r.op_name_id = r.name_id;
    if (r.kind == RangeKind::cpu_op) {
      r.op_candidate = r.marker == MarkerKind::none;
    } else if (r.kind == RangeKind::nvtx) {
      if (auto op = framework_op_from_nvtx(name)) {
        r.op_candidate = true;
        if (*op != name) r.op_name_id = t.intern(*op);
      }
    }
    if (r.op_candidate) ++framework_ops;
  }
  if (framework_ops == 0) {
    for (auto& r : t.ranges) {
      if (r.kind == RangeKind::nvtx && r.marker == MarkerKind::none) r.op_candidate = true;
    }
  }
}

void nest_ranges(TraceData& t) {
  auto& ranges = t.ranges;
  std::sort(ranges.begin(), ranges.end(), [](const RangeRec& a, const RangeRec& b) {
    bool ga = a.kind == RangeKind::gpu_user_annotation, gb = b.kind == RangeKind::gpu_user_annotation;
    if (ga != gb) return gb;
    if (a.pid != b.pid) return a.pid < b.pid;
    if (a.tid != b.tid) return a.tid < b.tid;
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.id < b.id;  // file order: Kineto writes the enclosing op first
  });
  std::vector<size_t> stack;
  for (size_t i = 0; i < ranges.size(); ++i) {
    auto& r = ranges[i];
    bool new_thread =
        i == 0 || ranges[i - 1].pid != r.pid || ranges[i - 1].tid != r.tid ||
        (ranges[i - 1].kind == RangeKind::gpu_user_annotation) != (r.kind == RangeKind::gpu_user_annotation);
    if (new_thread) stack.clear();
    while (!stack.empty() && ranges[stack.back()].end <= r.start) stack.pop_back();
    r.parent = -1;
    r.depth = 0;
    // Normally the top contains r; with partially overlapping ranges look further down.
    for (size_t k = stack.size(); k-- > 0;) {
      if (ranges[stack[k]].end >= r.end) {
        r.parent = static_cast<int32_t>(stack[k]);
        r.depth = ranges[stack[k]].depth + 1;
        break;
      }
    }
    stack.push_back(i);
  }
}

bool is_backward_thread(const TraceData& t, size_t begin, size_t end) {
  size_t top = 0, backward = 0;
  for (size_t i = begin; i < end; ++i) {
    const auto& r = t.ranges[i];
    if (r.marker == MarkerKind::profiler_step || r.iteration_marker || is_optimizer_step(t.text(r.name_id)))
      return false;
    if (r.parent >= 0 || r.kind == RangeKind::python_function) continue;
    ++top;
    if (r.backward_name) ++backward;
  }
  return top > 0 && backward * 2 >= top;
}

void build_ops(TraceData& t) {
  t.ops.clear();
  t.ops.reserve(t.ranges.size());  // at most one op per range: no reallocation
  // Nor of the path nodes: one per path-kind range, and room for the unassociated ops' (one per
  // runtime call name without an op: correlation.cpp) beyond.
  t.op_paths.reserve(t.ranges.size() + 4096);
  std::unordered_map<int64_t, int32_t> labels;  // the tree's label of each name (path_label)
  auto& ranges = t.ranges;
  size_t n = ranges.size();
  size_t begin = 0;
  while (begin < n) {
    size_t end = begin + 1;
    while (end < n && ranges[end].pid == ranges[begin].pid && ranges[end].tid == ranges[begin].tid &&
           (ranges[end].kind == RangeKind::gpu_user_annotation) ==
               (ranges[begin].kind == RangeKind::gpu_user_annotation))
      ++end;
    if (ranges[begin].kind == RangeKind::gpu_user_annotation) {
      begin = end;
      continue;
    }
    bool backward_thread = is_backward_thread(t, begin, end);
    std::vector<Frame> stack;
    std::unordered_map<int64_t, int32_t> top_counts;  // sibling counters of top-level path nodes
    int32_t top_iteration = -2;
    for (size_t i = begin; i < end; ++i) {
      auto& r = ranges[i];
      while (!stack.empty() && stack.back().range != r.parent) stack.pop_back();
      Frame f;
      f.range = static_cast<int64_t>(i);
      if (!stack.empty()) {
        const Frame& p = stack.back();
        f.op = p.op;
        f.path_frame = p.path_frame;
        f.in_optimizer = p.in_optimizer;
        f.in_dataloader = p.in_dataloader;
        f.in_backward = p.in_backward;
      }
      const std::string& name = t.text(r.name_id);
      f.in_optimizer = f.in_optimizer || r.marker == MarkerKind::optimizer;
      f.in_dataloader = f.in_dataloader || r.marker == MarkerKind::dataloader;
      f.in_backward = f.in_backward || backward_thread || r.backward_name ||
                      (r.kind == RangeKind::user_annotation && contains_ascii_nocase(name, "backward"));
      int32_t iteration = iteration_at(t.iterations, r.start);
      bool becomes_op = r.op_candidate && !(r.iteration_marker && r.kind != RangeKind::cpu_op);
      if (is_path_kind(r.kind)) {
        int64_t label_id = becomes_op ? r.op_name_id : r.name_id;
        std::unordered_map<int64_t, int32_t>* counts;
        int32_t parent_node = PathTree::kTop;
        if (f.path_frame >= 0) {
          counts = &stack[static_cast<size_t>(f.path_frame)].child_counts;
          parent_node = stack[static_cast<size_t>(f.path_frame)].path_node;
        } else {
          // Top-level siblings are numbered per iteration so the same op has the same path in every
          // iteration that is not itself a path node (auto-detected or key-node iterations).
          if (iteration != top_iteration) {
            top_counts.clear();
            top_iteration = iteration;
          }
          counts = &top_counts;
        }
        int32_t k = ++(*counts)[label_id];
        f.path_node = t.op_paths.add(parent_node, path_label(t, label_id, labels), k);
        f.path_frame = static_cast<int64_t>(stack.size());
      }
      if (becomes_op) {
        OpRec op;
        op.range = static_cast<int32_t>(i);
        op.name_id = static_cast<int32_t>(r.op_name_id);
        auto type = t.op_type_of_name.find(r.op_name_id);
        if (type == t.op_type_of_name.end())
          type = t.op_type_of_name.emplace(r.op_name_id, t.add_op_type(normalize_op_type(t.text(r.op_name_id)))).first;
        op.op_type = type->second;
        op.parent = static_cast<int32_t>(f.op);
        op.depth = f.op >= 0 ? t.ops[static_cast<size_t>(f.op)].depth + 1 : 0;
        op.path_node = f.path_node;  // kTop (path '') for a range of no path kind: none becomes an op
        op.iteration = iteration;
        op.pass = f.in_optimizer    ? OpPass::optimizer
                  : f.in_backward   ? OpPass::bwd
                  : f.in_dataloader ? OpPass::dataloader
                  : iteration >= 0  ? OpPass::fwd
                                    : OpPass::other;
        std::optional<std::string_view> types;
        if (int64_t id = t.args(r).input_types_id; id != kNone) types = t.text(id);
        // Counted once, at the outermost eligible op: an eligible op inside an eligible op's
        // sub-tree is part of that op (docs/derivation.md, "Tensor Core eligibility").
        int32_t enclosing_root = f.op >= 0 ? t.ops[static_cast<size_t>(f.op)].tc_root : -1;
        op.tc_eligible = enclosing_root < 0 && is_tc_eligible(t.op_types[static_cast<size_t>(op.op_type)], types);
        op.tc_root = op.tc_eligible ? static_cast<int32_t>(t.ops.size()) : enclosing_root;
        r.op = static_cast<int32_t>(t.ops.size());
        f.op = r.op;
        t.ops.push_back(std::move(op));
      }
      stack.push_back(std::move(f));
    }
    begin = end;
  }
}

// Sums of kernel time saturate (add_saturating): a hostile profile with many kernels of years each
// must not overflow (each duration is bounded at import, their sum is not).
void aggregate_op_gpu_time(TraceData& t) {
  const DeriveOptions* o = t.options;
  for (auto& op : t.ops) op.gpu_time_ns = op.kernel_count = op.tc_time_ns = 0;
  for (const auto& g : t.gpu) {
    if (g.kind != GpuKind::kernel || g.op < 0) continue;
    if (!iteration_selected(o, g.iteration)) continue;
    int64_t dur = g.end - g.start;
    for (int64_t k = g.op; k >= 0; k = t.ops[static_cast<size_t>(k)].parent) {
      auto& op = t.ops[static_cast<size_t>(k)];
      add_saturating(op.gpu_time_ns, dur);
      op.kernel_count += 1;
      if (g.tensor_core) add_saturating(op.tc_time_ns, dur);
    }
  }
}

}  // namespace proflint
