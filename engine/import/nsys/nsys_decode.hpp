// engine/import/nsys/nsys_decode.hpp — pure decoding rules of Nsight Systems exports.
//
// Everything here works on values, never on a file, so each rule is unit-tested on its own:
// globalTid/globalPid packing, CUPTI API-name suffixes, enum values (from the export's ENUM_*
// tables or CUPTI's numbering), kernel-name architecture hints, torch emit_nvtx texts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/common/utf8.hpp"

namespace proflint::nsys {

// nsys packs ids as [hw/vm id : 16][pid : 24][tid : 24]; a globalPid has tid bits 0.
struct HostIds {
  int64_t pid = 0;
  int64_t tid = 0;
};
HostIds decode_global_tid(int64_t global_tid);
int64_t pid_of_global_pid(int64_t global_pid);

// 'cudaLaunchKernel_v7000' -> 'cudaLaunchKernel'. Only 4 to 6 digits count as a CUPTI suffix:
// driver entry points such as 'cuMemAlloc_v2' are real symbol names and stay as they are.
std::string_view strip_cupti_suffix(std::string_view name);

// 'runtime', 'driver' or 'other' for a (stripped) API name; the name decides first because
// nsys 2022.2 also records backtrace rows (eventClass 67) of runtime calls.
const char* api_kind(std::string_view name, std::optional<int64_t> event_class);

// CUPTI numbering, used when the export has no ENUM_* table (nsys before 2024.5);
// nullptr for a value CUPTI does not define.
const char* memcpy_kind_from_cupti(int64_t value);  // 1 -> 'htod', 11 -> 'uvm_htod'
const char* mem_kind_from_cupti(int64_t value);     // 0 -> 'pageable', 1 -> 'pinned', ...
const char* sync_kind_from_cupti(int64_t value);    // 1 -> 'event_sync', ... 0 -> 'unknown'
const char* memory_op_from_cupti(int64_t value);    // 0 -> 'alloc', 1 -> 'free'

// ENUM_* table names -> the schema's words ('CUDA_MEMCPY_KIND_UVM_HTOD' -> 'uvm_htod').
std::string memcpy_kind_from_enum_name(std::string_view name);
std::string mem_kind_from_enum_name(std::string_view name);
std::string sync_kind_from_enum_name(std::string_view name);
std::string memory_op_from_enum_name(std::string_view name);

// An enum decoded once per import: CUPTI defaults, overlaid by the export's own ENUM_* rows
// when the table exists (the file is the authority for its own numbering).
class EnumDecoder {
 public:
  using FromCupti = const char* (*)(int64_t);
  using FromName = std::string (*)(std::string_view);
  EnumDecoder(FromCupti from_cupti, FromName from_name);
  void use_file_enum(const std::vector<std::pair<int64_t, std::string>>& rows);
  bool from_file() const { return from_file_; }
  // The schema word for `value`; 'unknown' with known=false when neither source defines it.
  const std::string& decode(int64_t value, bool& known) const;

 private:
  static constexpr int64_t kMaxValue = 4096;  // enum values are small; larger ones are garbage
  FromName from_name_;
  bool from_file_ = false;
  std::vector<std::string> words_;  // index = value; empty = undefined
  std::string unknown_ = "unknown";
};

// What a kernel name says about the GPU that ran it. Arch-specific families (sm90_, sm100_:
// wgmma / tcgen05 code that runs on exactly that architecture) are exact; portable families
// (sm80_, ampere_, volta_, turing_, nvjet, cutlass_80_) only give a lower bound — cuBLAS runs
// sm80_xmma kernels on H100, which nsys2026_h100_2gpu_1s shows.
struct ArchHint {
  int major = 0;
  int minor = 0;
  bool exact = false;
};
std::optional<ArchHint> arch_hint_from_kernel_name(std::string_view name);
// Folds hints of one device's kernels: the highest exact hint, else the highest lower bound.
std::optional<ArchHint> combine_arch_hints(const std::vector<ArchHint>& hints);

// torch.autograd.profiler.emit_nvtx ranges: 'aten::add, op_id = 314359' or '..., seq = 12'.
bool is_torch_emit_nvtx(std::string_view text);

// What emit_nvtx writes after the op name: 'aten::conv2d, seq = 12, op_id = 5, sizes = [[32, 3, 224,
// 224], [64, 3, 7, 7], []]' (sizes only with record_shapes=True). seq is the autograd sequence
// number (pairs forward and backward ops, as Kineto's 'Sequence number'); sizes the input shapes,
// kept as the JSON list Kineto's 'Input Dims' holds. Absent parts are nullopt.
struct EmitNvtxArgs {
  std::optional<int64_t> seq;
  std::optional<std::string_view> sizes;
};
EmitNvtxArgs emit_nvtx_args(std::string_view text);

// A GPU's identity as two tables of one export may spell it: TARGET_INFO_GPU.uuid is bare
// ('554a6988-03dd-…'), TARGET_INFO_CUDA_DEVICE.uuid may carry nvidia-smi's 'GPU-' prefix; case
// differs between tools. Empty when the text holds no identity ('', '<UNKNOWN…>').
std::string gpu_uuid_key(std::string_view uuid);
// A PCI bus id as a comparable key: TARGET_INFO_GPU.busLocation ('0000:2D:00.0') and
// TARGET_INFO_CUDA_GPU.pciBusId (any domain width, '00000000:2d:00.0'; '<UNKNOWN_BUS_ID>' when
// nsys could not resolve it) -> 'domain:bus:device.function' in lower-case hex without leading
// zeros. Empty for text that is not a bus id.
std::string pci_bus_key(std::string_view bus);

// True for a library of the C runtime itself (libc, libpthread, the dynamic loader, libdl, librt,
// libm, libstdc++/libc++, libgcc_s, the vDSO), by the file name of a backtrace frame's module
// ('/usr/lib/x86_64-linux-gnu/libpthread-2.31.so'): an OS call's caller is the first frame outside them.
bool is_c_runtime_module(std::string_view module);

// Text as valid UTF-8 (is_valid_utf8, sanitize_utf8): engine/common/utf8.hpp. StringIds of nsys
// 2022.2 hold non-UTF-8 bytes, and every emitter downstream expects UTF-8.

// 'file:' URI that opens `path` immutable (read-only, no locks, no journal, no -shm/-wal files),
// with the characters that URIs reserve percent-encoded.
std::string immutable_sqlite_uri(std::string_view path);

}  // namespace proflint::nsys
