// engine/import/kineto/names.cpp — Kineto category and event-name decoding.
#include "engine/import/kineto/names.hpp"

#include <array>
#include <utility>

namespace proflint::kineto {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Kineto's memoryKindString() values (and ROCm's "Host") to the schema's vocabulary.
std::string_view memory_kind(std::string_view text) {
  text = trim(text);
  if (text == "Pageable") return "pageable";
  if (text == "Pinned") return "pinned";
  if (text == "Device" || text == "Device Static") return "device";
  if (text == "Managed" || text == "Managed Static") return "managed";
  if (text == "Array") return "array";
  return "unknown";
}

}  // namespace

Category classify_category(std::string_view cat) {
  // Ordered by how often each appears in real traces.
  static constexpr std::array<std::pair<std::string_view, Category>, 29> table{{
      {"cpu_op", Category::cpu_op},
      {"ac2g", Category::flow},
      {"cuda_runtime", Category::runtime},
      {"python_function", Category::python_function},
      {"kernel", Category::kernel},
      {"cpu_instant_event", Category::instant},
      {"user_annotation", Category::user_annotation},
      {"gpu_memcpy", Category::memcpy},
      {"gpu_memset", Category::memset},
      {"cuda_driver", Category::driver},
      {"gpu_user_annotation", Category::gpu_user_annotation},
      {"fwdbwd", Category::flow},
      {"cuda_sync", Category::cuda_sync},
      {"Operator", Category::cpu_op},
      {"async", Category::flow},
      {"Runtime", Category::legacy_runtime},
      {"Kernel", Category::kernel},
      {"Memset", Category::memset},
      {"Memcpy", Category::memcpy},
      {"async_gpu", Category::flow},
      {"async_cpu_to_gpu", Category::flow},
      {"Trace", Category::ignored},
      {"external_correlation", Category::ignored},
      {"cuda_profiler_range", Category::profiler_range},
      {"overhead", Category::other_range},
      {"collective_comm", Category::other_range},
      {"mtia_runtime", Category::other_runtime},
      {"mtia_ccp_events", Category::device_activity},
      {"mtia_insight", Category::other_range},
  }};
  for (const auto& [name, category] : table)
    if (cat == name) return category;
  if (cat == "xpu_runtime" || cat == "glow_runtime" || cat == "privateuse1_runtime" || cat == "privateuse1_driver")
    return Category::other_runtime;
  // proflint's own tracks in an exported trace (iterations, findings): derived, not profile data.
  if (cat == "proflint") return Category::ignored;
  return Category::unknown;
}

bool is_legacy_annotation(std::string_view name) {
  return starts_with(name, "ProfilerStep#") || starts_with(name, "Optimizer.step#") ||
         starts_with(name, "Optimizer.zero_grad#") || starts_with(name, "enumerate(DataLoader)#");
}

bool is_mtia_category(std::string_view cat) { return starts_with(cat, "mtia_"); }

std::string_view flow_kind(std::string_view cat) {
  if (cat == "ac2g" || cat == "async" || cat == "async_gpu" || cat == "async_cpu_to_gpu") return "ac2g";
  return cat;  // fwdbwd and anything newer, as recorded
}

MemcpyName parse_memcpy_name(std::string_view name) {
  MemcpyName out;
  std::string_view rest = trim(name);
  if (!starts_with(rest, "Memcpy")) return out;
  rest = trim(rest.substr(6));
  size_t space = rest.find(' ');
  std::string_view direction = rest.substr(0, space);
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 10> directions{{
      {"HtoD", "htod"}, {"DtoH", "dtoh"}, {"DtoD", "dtod"}, {"HtoH", "htoh"}, {"PtoP", "ptop"},
      {"HtoA", "htoa"}, {"AtoH", "atoh"}, {"AtoA", "atoa"}, {"AtoD", "atod"}, {"DtoA", "dtoa"},
  }};
  for (const auto& [text, kind] : directions)
    if (direction == text) out.kind = kind;
  size_t open = rest.find('(');
  size_t arrow = rest.find("->", open == std::string_view::npos ? 0 : open);
  size_t close = rest.rfind(')');
  if (open != std::string_view::npos && arrow != std::string_view::npos && close != std::string_view::npos && open < arrow &&
      arrow < close) {
    out.src_kind = memory_kind(rest.substr(open + 1, arrow - open - 1));
    out.dst_kind = memory_kind(rest.substr(arrow + 2, close - arrow - 2));
  }
  return out;
}

std::optional<std::string_view> parse_memset_kind(std::string_view name) {
  size_t open = name.find('(');
  size_t close = name.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  return memory_kind(name.substr(open + 1, close - open - 1));
}

std::string_view sync_kind_from_name(std::string_view name) {
  name = trim(name);
  if (name == "Event Sync") return "event_sync";
  if (name == "Stream Sync") return "stream_sync";
  if (name == "Context Sync") return "context_sync";
  if (name == "Stream Wait Event") return "stream_wait_event";
  return "unknown";
}

std::string_view legacy_api_kind(std::string_view api_name) {
  if (starts_with(api_name, "cu") && !starts_with(api_name, "cuda")) return "driver";
  return "runtime";
}

std::string_view strip_api_version(std::string_view name) {
  size_t v = name.rfind("_v");
  if (v == std::string_view::npos || name.size() - (v + 2) < 4) return name;
  for (size_t i = v + 2; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return name;
  return name.substr(0, v);
}

std::optional<std::string_view> vendor_from_device_name(std::string_view name) {
  if (contains(name, "AMD") || contains(name, "Radeon") || contains(name, "Instinct")) return "amd";
  if (contains(name, "NVIDIA") || contains(name, "Tesla") || contains(name, "GeForce") || contains(name, "Quadro") ||
      contains(name, "TITAN") || contains(name, "RTX"))
    return "nvidia";
  return std::nullopt;
}

}  // namespace proflint::kineto
