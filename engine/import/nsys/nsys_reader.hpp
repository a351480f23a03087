// engine/import/nsys/nsys_reader.hpp — reads the tables of one Nsight Systems export into facts.
//
// One pass per table with one prepared statement; StringIds and the ENUM_* tables are loaded
// once up front, so no row costs a query. Tables are optional: whatever the export lacks is
// skipped. Environment dumps (TARGET_INFO_SYSTEM_ENV, META_DATA_CAPTURE) are never read.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/import/nsys/nsys_decode.hpp"
#include "engine/import/nsys/nsys_sqlite.hpp"
#include "engine/import/progress.hpp"
#include "engine/model/sink.hpp"

namespace proflint::nsys {

// StringIds(id, value), valid UTF-8. Dense ids (the normal case) index a vector; sparse ones
// (window-cut files keep ids up to 331886 for 140 strings) go to a hash map.
class StringTable {
 public:
  void load(std::vector<std::pair<int64_t, std::string>> rows);
  const std::string* find(int64_t id) const;
  size_t size() const { return count_; }

 private:
  std::vector<std::string> dense_;
  std::vector<bool> dense_present_;
  std::unordered_map<int64_t, std::string> sparse_;
  size_t count_ = 0;
};

// Version facts found in META_DATA_EXPORT / EXPORT_META_DATA (nothing else of those tables).
struct ExportVersion {
  std::optional<std::string> product, schema;
};
ExportVersion read_export_version(const ExportFile& file);

// True when the file has at least one table that only Nsight Systems exports carry.
bool looks_like_nsys_export(const ExportFile& file);

// One process's CUDA device id and the physical GPU it is (TARGET_INFO_CUDA_DEVICE by gpuId or
// uuid, or TARGET_INFO_CUDA_GPU.pciBusId matched to TARGET_INFO_GPU.busLocation in 2020 exports).
struct ProcessDevice {
  int64_t pid = 0, cuda_id = 0;
  int64_t gpu = 0;  // the GPU's device id in the store (nsys GPU id until numbered)
};

class ExportReader {
 public:
  ExportReader(const ExportFile& file, FactSink& writer) : file_(file), w_(writer) {}
  // Rows of the activity tables (an estimate from their largest rowid, without a scan): the total
  // of the progress bar, which advances as each table is read.
  uint64_t estimated_rows() const;
  uint64_t table_rows(const std::string& table) const;  // its largest rowid; 0 when missing
  uint64_t file_bytes() const;                          // pages x page size
  void set_progress(ProgressBar* progress) { progress_ = progress; }
  // Reads every table it knows. A table that fails midway (truncated file) keeps the rows read
  // before the failure, is counted as 'table_unreadable', and the other tables still run.
  void read_all();
  const std::optional<ReadError>& first_failure() const { return first_failure_; }

 private:
  void guarded(const std::string& table, void (ExportReader::*step)());
  void start_read_ahead();
  std::string nvtx_domain_clause() const;
  std::string memory_usage_clause() const;
  void read_strings();
  void read_enums();
  void read_gpu_tables();
  void read_processes();
  void read_launch_environment();
  void read_threads();
  void read_kernels();
  void read_memcpys();
  void read_memsets();
  void read_syncs();
  void read_runtime();
  void read_nvtx_domains();
  void read_nvtx();
  void read_memory_usage();
  void read_gpu_metrics();
  void read_contexts();
  void read_streams();
  void write_devices();
  // Host activity (nsys_host.cpp).
  void read_os_calls();
  std::unordered_map<int64_t, std::string> read_os_call_callers();
  void read_cpu_samples();
  void read_graph_node_events();  // CUDA_GRAPH_EVENTS
  bool host_columns_present(const std::string& table, const std::vector<std::string_view>& needed);

  // Name for string id `id`, or a '<string N>' placeholder (counted) when StringIds lacks it.
  std::string_view string_or_placeholder(int64_t id, std::string& scratch, const Rows& rows);
  // (start, dur) of an interval row, or nullopt after counting why it is unusable.
  // Timestamps beyond ±2^61 ns (73 years) are dropped with an issue: every later difference of
  // two of them then stays inside int64 (the Kineto importer bounds ts + dur the same way).
  std::optional<std::pair<int64_t, int64_t>> interval(const Rows& rows, int start_col, int end_col);
  opt_i64 bounded(const Rows& rows, int col, int64_t max, std::string_view what);
  void issue(std::string_view kind, std::string_view example, const Rows& rows);
  void note_activity(const opt_i64& device, const opt_i64& stream, const opt_i64& pid, const opt_i64& context);
  std::vector<std::pair<int64_t, std::string>> read_enum(const std::string& table);

  const ExportFile& file_;
  FactSink& w_;
  ProgressBar* progress_ = nullptr;
  std::optional<ReadError> first_failure_;

  StringTable strings_;
  EnumDecoder memcpy_kinds_{memcpy_kind_from_cupti, memcpy_kind_from_enum_name};
  EnumDecoder mem_kinds_{mem_kind_from_cupti, mem_kind_from_enum_name};
  EnumDecoder sync_kinds_{sync_kind_from_cupti, sync_kind_from_enum_name};
  EnumDecoder memory_ops_{memory_op_from_cupti, memory_op_from_enum_name};

  // Devices from the GPU tables (written last, with those only seen in activity).
  std::map<int64_t, DeviceRow> devices_;
  bool has_gpu_table_ = false;
  std::unordered_map<int64_t, int64_t> gpu_to_device_;  // TARGET_INFO_GPU.id -> CUDA device id
  // (pid, the process's CUDA device id) -> the physical GPU's device id, filled wherever the export
  // records which GPU each process's id is (TARGET_INFO_CUDA_DEVICE / TARGET_INFO_CUDA_GPU), so that
  // kernels, copies, memory usage, streams and GPU metrics of one GPU share one number; empty
  // otherwise, and ids are kept as recorded.
  std::map<std::pair<int64_t, int64_t>, int64_t> device_of_process_;
  opt_i64 map_device(const opt_i64& pid, const opt_i64& device) const;
  void map_process_devices(const std::vector<ProcessDevice>& rows);  // fills device_of_process_
  bool processes_from_table_ = false;

  // What activity rows showed: used for devices, streams and the (pid, context) -> device map
  // that TARGET_INFO_CUDA_STREAM needs (it records no device).
  std::set<int64_t> devices_seen_;
  std::map<int64_t, std::set<int64_t>> pids_of_device_;
  std::set<std::pair<int64_t, int64_t>> streams_seen_;
  std::map<std::pair<int64_t, int64_t>, int64_t> context_device_;
  struct LastActivity {
    opt_i64 device, stream, pid, context;
    bool valid = false;
  } last_activity_;
  // (device, kernel name id) pairs, collected only when no GPU table names the devices.
  struct PairHash {
    size_t operator()(const std::pair<int64_t, int64_t>& p) const {
      return std::hash<int64_t>{}(p.first * 1000003 + p.second);
    }
  };
  std::unordered_set<std::pair<int64_t, int64_t>, PairHash> device_kernel_names_;

  // NVTX domain names by (pid, domainId); by domainId alone when it is unambiguous.
  std::map<std::pair<int64_t, int64_t>, std::string> domains_;
  std::map<int64_t, std::optional<std::string>> domains_by_id_;
  bool torch_nvtx_ = false;
};

}  // namespace proflint::nsys
