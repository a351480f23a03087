// engine/import/nsys/nsys_decode.cpp — pure decoding rules of Nsight Systems exports.
#include "engine/import/nsys/nsys_decode.hpp"

#include <algorithm>
#include <cctype>

namespace proflint::nsys {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// 'PREFIX_REST' -> 'rest'; names without the prefix are lower-cased as they are, so a value
// added by a newer nsys still reads as a sensible word.
std::string enum_word(std::string_view name, std::string_view prefix) {
  if (starts_with(name, prefix)) name.remove_prefix(prefix.size());
  return lower(name);
}

}  // namespace

HostIds decode_global_tid(int64_t global_tid) {
  auto g = static_cast<uint64_t>(global_tid);
  return {static_cast<int64_t>((g >> 24) & 0xFFFFFF), static_cast<int64_t>(g & 0xFFFFFF)};
}

int64_t pid_of_global_pid(int64_t global_pid) { return decode_global_tid(global_pid).pid; }

std::string_view strip_cupti_suffix(std::string_view name) {
  size_t pos = name.rfind("_v");
  if (pos == std::string_view::npos || pos == 0) return name;
  std::string_view digits = name.substr(pos + 2);
  if (digits.size() < 4 || digits.size() > 6) return name;
  if (!std::all_of(digits.begin(), digits.end(), is_digit)) return name;
  return name.substr(0, pos);
}

const char* api_kind(std::string_view name, std::optional<int64_t> event_class) {
  if (name.size() > 4 && starts_with(name, "cuda") && is_upper(name[4])) return "runtime";
  if (name.size() > 2 && starts_with(name, "cu") && is_upper(name[2])) return "driver";
  if (event_class == 0) return "runtime";
  if (event_class == 1) return "driver";
  return "other";
}

const char* memcpy_kind_from_cupti(int64_t value) {
  static const char* const kinds[] = {"unknown", "htod", "dtoh", "htoa", "atoh",     "atoa",     "atod",
                                      "dtoa",    "dtod", "htoh", "ptop", "uvm_htod", "uvm_dtoh", "uvm_dtod"};
  if (value < 0 || value >= static_cast<int64_t>(std::size(kinds))) return nullptr;
  return kinds[value];
}

const char* mem_kind_from_cupti(int64_t value) {
  static const char* const kinds[] = {"pageable", "pinned",        "device",         "array",
                                      "managed",  "device_static", "managed_static", "unknown"};
  if (value < 0 || value >= static_cast<int64_t>(std::size(kinds))) return nullptr;
  return kinds[value];
}

const char* sync_kind_from_cupti(int64_t value) {
  static const char* const kinds[] = {"unknown", "event_sync", "stream_wait_event", "stream_sync", "context_sync"};
  if (value < 0 || value >= static_cast<int64_t>(std::size(kinds))) return nullptr;
  return kinds[value];
}

const char* memory_op_from_cupti(int64_t value) {
  if (value == 0) return "alloc";
  if (value == 1) return "free";
  return nullptr;
}

std::string memcpy_kind_from_enum_name(std::string_view name) { return enum_word(name, "CUDA_MEMCPY_KIND_"); }

std::string mem_kind_from_enum_name(std::string_view name) { return enum_word(name, "CUDA_MEMOPR_MEMORY_KIND_"); }

std::string sync_kind_from_enum_name(std::string_view name) {
  std::string word = enum_word(name, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_");
  if (word == "event_synchronize") return "event_sync";
  if (word == "stream_wait_event") return "stream_wait_event";
  if (word == "stream_synchronize") return "stream_sync";
  if (word == "context_synchronize") return "context_sync";
  return "unknown";
}

std::string memory_op_from_enum_name(std::string_view name) {
  std::string word = enum_word(name, "CUDA_DEV_MEM_EVENT_OPR_");
  if (word == "allocation") return "alloc";
  if (word == "deallocation") return "free";
  return word;
}

EnumDecoder::EnumDecoder(FromCupti from_cupti, FromName from_name) : from_name_(from_name) {
  for (int64_t v = 0; v < 64; ++v) {
    const char* word = from_cupti(v);
    if (!word) continue;
    if (static_cast<int64_t>(words_.size()) <= v) words_.resize(static_cast<size_t>(v) + 1);
    words_[static_cast<size_t>(v)] = word;
  }
}

void EnumDecoder::use_file_enum(const std::vector<std::pair<int64_t, std::string>>& rows) {
  for (const auto& [value, name] : rows) {
    if (value < 0 || value >= kMaxValue) continue;
    if (static_cast<int64_t>(words_.size()) <= value) words_.resize(static_cast<size_t>(value) + 1);
    words_[static_cast<size_t>(value)] = from_name_(name);
    from_file_ = true;
  }
}

const std::string& EnumDecoder::decode(int64_t value, bool& known) const {
  known = value >= 0 && value < static_cast<int64_t>(words_.size()) && !words_[static_cast<size_t>(value)].empty();
  return known ? words_[static_cast<size_t>(value)] : unknown_;
}

std::optional<ArchHint> arch_hint_from_kernel_name(std::string_view name) {
  while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
  if (starts_with(name, "void ")) name.remove_prefix(5);
  // smNN_ / smNNa_ / smNNN_: cuBLAS/cuDNN kernel families named after their architecture.
  if (starts_with(name, "sm") && name.size() > 3 && is_digit(name[2])) {
    size_t i = 2;
    int number = 0;
    while (i < name.size() && is_digit(name[i]) && i < 5) number = number * 10 + (name[i++] - '0');
    bool arch_suffix = i < name.size() && (name[i] == 'a' || name[i] == 'f');
    if (arch_suffix) ++i;
    if (number >= 50 && i < name.size() && name[i] == '_') return ArchHint{number / 10, number % 10, number >= 90};
  }
  struct Family {
    std::string_view prefix;
    int major, minor;
  };
  static const Family families[] = {{"nvjet", 9, 0},   {"ampere_", 8, 0}, {"turing_", 7, 5},
                                    {"volta_", 7, 0},  {"maxwell_", 5, 0}, {"pascal_", 6, 0}};
  for (const auto& f : families)
    if (starts_with(name, f.prefix)) return ArchHint{f.major, f.minor, false};
  // CUTLASS 2 tiles name the architecture they target: cutlass_80_tensorop_..., cutlass_75_...
  if (size_t pos = name.find("cutlass_"); pos != std::string_view::npos && pos + 11 <= name.size()) {
    std::string_view tail = name.substr(pos + 8);
    if (is_digit(tail[0]) && is_digit(tail[1]) && tail[2] == '_') return ArchHint{tail[0] - '0', tail[1] - '0', false};
  }
  return std::nullopt;
}

std::optional<ArchHint> combine_arch_hints(const std::vector<ArchHint>& hints) {
  std::optional<ArchHint> best_exact, best_bound;
  auto higher = [](const ArchHint& a, const ArchHint& b) { return std::pair(a.major, a.minor) > std::pair(b.major, b.minor); };
  for (const auto& h : hints) {
    auto& slot = h.exact ? best_exact : best_bound;
    if (!slot || higher(h, *slot)) slot = h;
  }
  return best_exact ? best_exact : best_bound;
}

bool is_torch_emit_nvtx(std::string_view text) {
  size_t scope = text.find("::");
  if (scope == std::string_view::npos) return false;
  for (std::string_view key : {std::string_view(", op_id = "), std::string_view(", seq = ")}) {
    size_t pos = text.find(key, scope);
    if (pos != std::string_view::npos && pos + key.size() < text.size() && is_digit(text[pos + key.size()])) return true;
  }
  return false;
}

EmitNvtxArgs emit_nvtx_args(std::string_view text) {
  EmitNvtxArgs out;
  if (!is_torch_emit_nvtx(text)) return out;
  constexpr std::string_view seq_key = ", seq = ", sizes_key = ", sizes = ";
  if (size_t p = text.find(seq_key); p != std::string_view::npos) {
    int64_t v = 0;
    size_t i = p + seq_key.size();
    bool any = false;
    for (; i < text.size() && is_digit(text[i]) && v < (INT64_MAX - 9) / 10; ++i, any = true) v = v * 10 + (text[i] - '0');
    if (any) out.seq = v;
  }
  if (size_t p = text.find(sizes_key); p != std::string_view::npos) {
    std::string_view dims = text.substr(p + sizes_key.size());
    while (!dims.empty() && dims.back() == ' ') dims.remove_suffix(1);
    // The list runs to the end of the text; a cut or odd text is left out rather than guessed at.
    int depth = 0;
    bool balanced = !dims.empty() && dims.front() == '[';
    for (size_t i = 0; balanced && i < dims.size(); ++i) {
      depth += dims[i] == '[' ? 1 : dims[i] == ']' ? -1 : 0;
      if (depth < 0 || (depth == 0 && i + 1 != dims.size())) balanced = false;
    }
    if (balanced && depth == 0) out.sizes = dims;
  }
  return out;
}

std::string gpu_uuid_key(std::string_view uuid) {
  std::string key = lower(uuid);
  if (starts_with(key, "gpu-")) key.erase(0, 4);
  // A UUID is hex digits and dashes; anything else ('<unknown>', 'n/a') names no GPU.
  bool hex = std::any_of(key.begin(), key.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
  bool only_uuid_chars =
      std::all_of(key.begin(), key.end(), [](char c) { return c == '-' || std::isxdigit(static_cast<unsigned char>(c)); });
  return hex && only_uuid_chars ? key : std::string();
}

std::string pci_bus_key(std::string_view bus) {
  // [domain:]bus:device.function, each part hex.
  std::vector<std::string_view> parts;
  size_t begin = 0;
  for (size_t i = 0; i <= bus.size(); ++i) {
    if (i == bus.size() || bus[i] == ':' || bus[i] == '.') {
      parts.push_back(bus.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  if (parts.size() == 3) parts.insert(parts.begin(), std::string_view("0"));
  if (parts.size() != 4 || bus.find('.') == std::string_view::npos) return {};
  std::string key;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string_view p = parts[i];
    if (p.empty() || p.size() > 8) return {};
    for (char c : p)
      if (!std::isxdigit(static_cast<unsigned char>(c))) return {};
    while (p.size() > 1 && p.front() == '0') p.remove_prefix(1);
    if (i) key += i == 3 ? '.' : ':';
    key += lower(p);
  }
  return key;
}

bool is_c_runtime_module(std::string_view module) {
  std::string_view base = module.substr(module.rfind('/') == std::string_view::npos ? 0 : module.rfind('/') + 1);
  for (std::string_view prefix : {"libc.", "libc-", "libpthread", "ld-linux", "ld-", "libdl.", "libdl-", "librt.",
                                  "librt-", "libm.", "libm-", "libstdc++", "libc++", "libgcc_s", "linux-vdso"})
    if (starts_with(base, prefix)) return true;
  return false;
}

std::string immutable_sqlite_uri(std::string_view path) {
  static const char hex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  for (char ch : path) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
      uri += ch;
    } else {
      uri += '%';
      uri += hex[c >> 4];
      uri += hex[c & 0xF];
    }
  }
  return uri + "?immutable=1";
}

}  // namespace proflint::nsys
