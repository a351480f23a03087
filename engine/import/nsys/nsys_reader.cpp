// engine/import/nsys/nsys_reader.cpp — reads the tables of one Nsight Systems export into facts.
#include "engine/import/nsys/nsys_reader.hpp"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <string_view>

#include "engine/common/import_issue_kinds.hpp"
#include "engine/common/timing.hpp"
#include "engine/import/samples/sample_text.hpp"

namespace proflint::nsys {

namespace {

const std::string kKernel = "CUPTI_ACTIVITY_KIND_KERNEL";
const std::string kMemcpy = "CUPTI_ACTIVITY_KIND_MEMCPY";
const std::string kMemset = "CUPTI_ACTIVITY_KIND_MEMSET";
const std::string kSync = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
const std::string kRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME";
const std::string kNvtx = "NVTX_EVENTS";
const std::string kMemoryUsage = "CUDA_GPU_MEMORY_USAGE_EVENTS";

// The columns read from each big table: prefetch() and the reading pass must name the same ones.
const std::vector<std::string_view> kStringColumns = {"id", "value"};
const std::vector<std::string_view> kKernelColumns = {
    "start", "end", "deviceId", "streamId", "globalPid", "correlationId", "demangledName", "shortName", "gridX",
    "gridY", "gridZ", "blockX", "blockY", "blockZ", "registersPerThread", "staticSharedMemory", "dynamicSharedMemory",
    "contextId", "graphId", "graphNodeId"};
const std::vector<std::string_view> kMemcpyColumns = {"start", "end", "deviceId", "streamId", "globalPid", "correlationId",
                                                      "bytes", "copyKind", "srcKind", "dstKind", "contextId"};
const std::vector<std::string_view> kMemsetColumns = {"start", "end", "deviceId", "streamId", "globalPid",
                                                      "correlationId", "bytes", "memKind", "contextId"};
const std::vector<std::string_view> kSyncColumns = {"start", "end", "deviceId", "streamId", "globalPid", "correlationId", "syncType"};
const std::vector<std::string_view> kRuntimeColumns = {"start", "end", "eventClass", "globalTid", "correlationId", "nameId"};
const std::vector<std::string_view> kNvtxDomainColumns = {"domainId", "text", "textId", "globalTid"};
const std::vector<std::string_view> kNvtxColumns = {"start", "end", "eventType", "text", "textId", "globalTid", "domainId"};
const std::vector<std::string_view> kMemoryUsageColumns = {"start", "deviceId", "bytes", "memoryOperationType",
                                                           "globalPid"};
const std::vector<std::string_view> kMetricColumns = {"timestamp", "typeId", "metricId", "value"};

// CUPTI writes 0xFFFFFFFF (and nsys sometimes -1) where a synchronization has no stream/device.
opt_i64 cupti_id(const opt_i64& v) {
  if (v && (*v == 0xFFFFFFFFLL || *v < 0)) return std::nullopt;
  return v;
}

std::string location(const Rows& rows) { return "table " + rows.table() + " row " + std::to_string(rows.row_number()); }

bool has_column(const std::vector<std::string>& columns, std::string_view name) {
  return std::find(columns.begin(), columns.end(), name) != columns.end();
}

// The text of a TEXT column as valid UTF-8 (copied only when it needs repair).
std::string_view utf8_text(std::string_view raw, std::string& scratch) {
  if (is_valid_utf8(raw)) return raw;
  scratch = sanitize_utf8(raw);
  return scratch;
}

constexpr int kNvtxMark = 34;
constexpr int kNvtxPushPopRange = 59;
constexpr int kNvtxStartEndRange = 60;
constexpr int kNvtxDomainCreate = 75;
// NVTX rows that describe rather than happen: categories, thread names, domain create/destroy,
// CUDA resource naming.
bool is_nvtx_metadata(int64_t type) {
  return type == 33 || type == 39 || type == 64 || (type >= 72 && type <= 76) || (type >= 97 && type <= 99);
}

// Runtime rows wait here, per thread, until no nested duplicate can follow. nsys 2022.2 writes a
// call twice (the CUDA backtrace row 'cudaMalloc' enclosing 'cudaMalloc_v3020', same
// correlationId); rows are stored in start order, so the two are a few rows apart at most on
// their thread and a window of recent rows per thread finds them without holding the table.
constexpr size_t kDedupWindow = 8;

// Limits of what an export can mean; values beyond are hostile or corrupt, and are dropped with a
// `timestamp_out_of_range` / `value_out_of_range` import issue instead of overflowing later sums.
constexpr int64_t kMaxAbsTimeNs = int64_t{1} << 61;
constexpr int64_t kMaxSharedMemoryBytes = int64_t{1} << 40;
constexpr int64_t kMaxTransferBytes = int64_t{1} << 50;  // 1 PiB in one copy, set or allocation
bool in_time_range(int64_t t) { return t >= -kMaxAbsTimeNs && t <= kMaxAbsTimeNs; }

}  // namespace

void StringTable::load(std::vector<std::pair<int64_t, std::string>> rows) {
  count_ = rows.size();
  int64_t max_id = -1;
  bool non_negative = true;
  for (const auto& r : rows) {
    max_id = std::max(max_id, r.first);
    non_negative = non_negative && r.first >= 0;
  }
  if (non_negative && max_id < static_cast<int64_t>(rows.size()) * 2 + 1024) {
    dense_.resize(static_cast<size_t>(max_id + 1));
    dense_present_.assign(static_cast<size_t>(max_id + 1), false);
    for (auto& [id, value] : rows) {
      dense_[static_cast<size_t>(id)] = std::move(value);
      dense_present_[static_cast<size_t>(id)] = true;
    }
  } else {
    for (auto& [id, value] : rows) sparse_.emplace(id, std::move(value));
  }
}

const std::string* StringTable::find(int64_t id) const {
  if (!dense_.empty() || sparse_.empty()) {
    if (id < 0 || id >= static_cast<int64_t>(dense_.size()) || !dense_present_[static_cast<size_t>(id)]) return nullptr;
    return &dense_[static_cast<size_t>(id)];
  }
  auto it = sparse_.find(id);
  return it == sparse_.end() ? nullptr : &it->second;
}

ExportVersion read_export_version(const ExportFile& file) {
  ExportVersion v;
  // Only the two version rows are selected: the other rows name the user, host and paths.
  for (const std::string table : {"META_DATA_EXPORT", "EXPORT_META_DATA"}) {
    auto columns = file.columns(table);
    if (!has_column(columns, "name") || !has_column(columns, "value")) continue;
    Rows rows(file, table, {"name", "value"}, "WHERE name IN ('EXPORT_PRODUCT_VERSION', 'EXPORT_SCHEMA_VERSION')");
    while (rows.next()) {
      std::string value(rows.text(1));
      if (value.empty() || !is_valid_utf8(value)) continue;
      if (rows.text(0) == "EXPORT_PRODUCT_VERSION" && !v.product) v.product = value;
      if (rows.text(0) == "EXPORT_SCHEMA_VERSION" && !v.schema) v.schema = value;
    }
    if (v.product || v.schema) break;
  }
  return v;
}

bool looks_like_nsys_export(const ExportFile& file) {
  for (const auto& t : file.tables()) {
    if (t == "StringIds" || t == kNvtx || t.rfind("CUPTI_ACTIVITY_KIND_", 0) == 0 || t.rfind("TARGET_INFO_", 0) == 0)
      return true;
  }
  return false;
}

void ExportReader::read_all() {
  const double cpu_before = thread_cpu_ms();
  // PROFLINT_NSYS_READ_AHEAD=0 steps every table on the export's own connection (for comparison).
  const char* read_ahead = std::getenv("PROFLINT_NSYS_READ_AHEAD");
  if (!read_ahead || std::string_view(read_ahead) != "0") start_read_ahead();
  guarded("StringIds", &ExportReader::read_strings);
  guarded("ENUM_*", &ExportReader::read_enums);
  guarded("TARGET_INFO_GPU", &ExportReader::read_gpu_tables);
  guarded("PROCESSES", &ExportReader::read_processes);
  guarded("META_DATA_CAPTURE", &ExportReader::read_launch_environment);
  guarded("ThreadNames", &ExportReader::read_threads);
  guarded(kKernel, &ExportReader::read_kernels);
  guarded(kMemcpy, &ExportReader::read_memcpys);
  guarded(kMemset, &ExportReader::read_memsets);
  guarded(kSync, &ExportReader::read_syncs);
  guarded(kRuntime, &ExportReader::read_runtime);
  guarded(kNvtx, &ExportReader::read_nvtx_domains);
  guarded(kNvtx, &ExportReader::read_nvtx);
  guarded("CUDA_GPU_MEMORY_USAGE_EVENTS", &ExportReader::read_memory_usage);
  guarded("GPU_METRICS", &ExportReader::read_gpu_metrics);
  guarded("TARGET_INFO_CUDA_CONTEXT_INFO", &ExportReader::read_contexts);
  guarded("TARGET_INFO_CUDA_STREAM", &ExportReader::read_streams);
  guarded("OSRT_API", &ExportReader::read_os_calls);
  guarded("COMPOSITE_EVENTS", &ExportReader::read_cpu_samples);
  guarded("CUDA_GRAPH_EVENTS", &ExportReader::read_graph_node_events);
  write_devices();
  if (torch_nvtx_) w_.set_metadata("framework", "pytorch");
  // The reading thread's own CPU time: with the tables read ahead, its share of the import.
  if (timings_enabled())
    std::cerr << "timing nsys_reader_thread_cpu " << thread_cpu_ms() - cpu_before << " ms\n";
}

std::string ExportReader::nvtx_domain_clause() const {
  return "WHERE eventType = " + std::to_string(kNvtxDomainCreate);
}

std::string ExportReader::memory_usage_clause() const {
  // Cumulative totals need time order; the export does not promise it.
  return has_column(file_.columns(kMemoryUsage), "start") ? "ORDER BY start" : "";
}

void ExportReader::start_read_ahead() {
  // Each big table on a connection and thread of its own, all at once, a few thousand rows ahead
  // of the pass that reads it (nsys_sqlite.hpp); rows and writes keep their order. A failure here
  // (a damaged schema) is left for the pass itself to meet and report.
  try {
    file_.prefetch("StringIds", kStringColumns);
    file_.prefetch(kKernel, kKernelColumns);
    file_.prefetch(kMemcpy, kMemcpyColumns);
    file_.prefetch(kMemset, kMemsetColumns);
    file_.prefetch(kSync, kSyncColumns);
    file_.prefetch(kRuntime, kRuntimeColumns);
    auto nvtx = file_.columns(kNvtx);
    if (has_column(nvtx, "eventType") && has_column(nvtx, "domainId"))
      file_.prefetch(kNvtx, kNvtxDomainColumns, nvtx_domain_clause());
    file_.prefetch(kNvtx, kNvtxColumns);
    file_.prefetch(kMemoryUsage, kMemoryUsageColumns, memory_usage_clause());
    file_.prefetch("GPU_METRICS", kMetricColumns);
  } catch (const ReadError&) {
  }
}

void ExportReader::guarded(const std::string& table, void (ExportReader::*step)()) {
  try {
    (this->*step)();
  } catch (const ReadError& e) {
    std::string where = e.table().empty() ? table : e.table();
    w_.add_issue(import_issue::table_unreadable, e.what(), "table " + where + " row " + std::to_string(e.row()));
    if (!first_failure_) first_failure_ = ReadError(where, e.row(), e.what());
  }
  if (progress_) progress_->update(static_cast<uint64_t>(w_.rows_written()));
}

// The largest rowid of `table`: its row count unless rows were deleted (one b-tree descent, where
// count(*) would read the table). 0 when it is missing or unreadable.
uint64_t ExportReader::table_rows(const std::string& table) const {
  if (!file_.has_table(table)) return 0;
  uint64_t rows = 0;
  sqlite3_stmt* st = nullptr;
  std::string sql = "SELECT max(rowid) FROM \"" + table + "\"";
  if (sqlite3_prepare_v2(file_.handle(), sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    rows = static_cast<uint64_t>(std::max<sqlite3_int64>(0, sqlite3_column_int64(st, 0)));
  sqlite3_finalize(st);
  return rows;
}

uint64_t ExportReader::file_bytes() const {
  auto pragma = [&](const char* sql) {
    int64_t v = 0;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(file_.handle(), sql, -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return static_cast<uint64_t>(std::max<int64_t>(0, v));
  };
  return pragma("PRAGMA page_count") * pragma("PRAGMA page_size");
}

uint64_t ExportReader::estimated_rows() const {
  uint64_t total = 0;
  for (const std::string& table : std::vector<std::string>{kKernel, kMemcpy, kMemset, kSync, kRuntime, kNvtx,
                                                            "CUDA_GPU_MEMORY_USAGE_EVENTS", "GPU_METRICS"})
    total += table_rows(table);
  return total;
}

void ExportReader::issue(std::string_view kind, std::string_view example, const Rows& rows) {
  w_.add_issue(kind, example, location(rows));
}

std::string_view ExportReader::string_or_placeholder(int64_t id, std::string& scratch, const Rows& rows) {
  if (const std::string* s = strings_.find(id)) return *s;
  scratch = "<string " + std::to_string(id) + ">";
  issue(import_issue::missing_string_id, scratch, rows);
  return scratch;
}

std::optional<std::pair<int64_t, int64_t>> ExportReader::interval(const Rows& rows, int start_col, int end_col) {
  if (rows.null(start_col) || rows.null(end_col)) {
    issue(import_issue::missing_timestamp, rows.null(start_col) ? "start is NULL" : "end is NULL", rows);
    return std::nullopt;
  }
  int64_t start = rows.i64(start_col), end = rows.i64(end_col);
  if (!in_time_range(start) || !in_time_range(end)) {
    issue(import_issue::timestamp_out_of_range, "start " + std::to_string(start) + " end " + std::to_string(end), rows);
    return std::nullopt;
  }
  if (end < start) {
    issue(import_issue::negative_duration, "start " + std::to_string(start) + " end " + std::to_string(end), rows);
    return std::nullopt;
  }
  return std::pair(start, end - start);  // both within ±2^61: no overflow
}

// A byte count, shared-memory size and the like: kept when 0 <= value <= `max`, else dropped
// (NULL) with an issue, so that sums over the column stay far from int64 overflow.
opt_i64 ExportReader::bounded(const Rows& rows, int col, int64_t max, std::string_view what) {
  if (rows.null(col)) return std::nullopt;
  int64_t v = rows.i64(col);
  if (v >= 0 && v <= max) return v;
  issue(import_issue::value_out_of_range, std::string(what) + " " + std::to_string(v), rows);
  return std::nullopt;
}

void ExportReader::note_activity(const opt_i64& device, const opt_i64& stream, const opt_i64& pid,
                                 const opt_i64& context) {
  auto& last = last_activity_;
  if (last.valid && last.device == device && last.stream == stream && last.pid == pid && last.context == context) return;
  last = {device, stream, pid, context, true};
  if (!device) return;
  devices_seen_.insert(*device);
  if (pid) pids_of_device_[*device].insert(*pid);
  if (stream) streams_seen_.emplace(*device, *stream);
  if (pid && context) context_device_.emplace(std::pair(*pid, *context), *device);
}

void ExportReader::read_strings() {
  if (!file_.has_table("StringIds")) return;
  std::vector<std::pair<int64_t, std::string>> rows_read;
  try {
    Rows rows(file_, "StringIds", kStringColumns);
    while (rows.next()) {
      if (rows.null(0)) continue;
      std::string_view raw = rows.text(1);
      rows_read.emplace_back(rows.i64(0), is_valid_utf8(raw) ? std::string(raw) : sanitize_utf8(raw));
    }
  } catch (const ReadError&) {
    // Keep the strings read before the damage: names past it become counted placeholders.
    strings_.load(std::move(rows_read));
    throw;
  }
  strings_.load(std::move(rows_read));
}

std::vector<std::pair<int64_t, std::string>> ExportReader::read_enum(const std::string& table) {
  std::vector<std::pair<int64_t, std::string>> values;
  if (!file_.has_table(table)) return values;
  Rows rows(file_, table, {"id", "name"});
  while (rows.next())
    if (!rows.null(0) && !rows.null(1)) values.emplace_back(rows.i64(0), std::string(rows.text(1)));
  return values;
}

void ExportReader::read_enums() {
  memcpy_kinds_.use_file_enum(read_enum("ENUM_CUDA_MEMCPY_OPER"));
  mem_kinds_.use_file_enum(read_enum("ENUM_CUDA_MEM_KIND"));
  sync_kinds_.use_file_enum(read_enum("ENUM_CUPTI_SYNC_TYPE"));
  memory_ops_.use_file_enum(read_enum("ENUM_CUDA_DEV_MEM_EVENT_OPER"));
}

void ExportReader::map_process_devices(const std::vector<ProcessDevice>& rows) {
  // No import issue: nothing is lost or approximated, the ids just become the physical GPUs'.
  for (const auto& p : rows) device_of_process_[{p.pid, p.cuda_id}] = p.gpu;
}

opt_i64 ExportReader::map_device(const opt_i64& pid, const opt_i64& device) const {
  if (!device || !pid || device_of_process_.empty()) return device;
  auto it = device_of_process_.find({*pid, *device});
  return it != device_of_process_.end() ? opt_i64(it->second) : device;
}

void ExportReader::read_gpu_tables() {
  // The store numbers GPUs physically: one number per GPU of the machine, the same in every table
  // and for every process. Activity rows carry the process's own CUDA ordinal, which is not that
  // number when CUDA_VISIBLE_DEVICES narrows or reorders what the process sees (each rank of a
  // torchrun/srun job calls its GPU "device 0"). Where the export says which GPU each process's
  // ordinal is, those ordinals are mapped (map_device):
  //   2026.1+  TARGET_INFO_CUDA_DEVICE(gpuId, cudaId, pid, uuid): gpuId = TARGET_INFO_GPU.id, else
  //            the uuid matched to TARGET_INFO_GPU.uuid;
  //   2020.3   TARGET_INFO_CUDA_GPU(deviceId, pid, pciBusId) matched to TARGET_INFO_GPU.busLocation.
  // 2022.x and 2024.x exports record no per-process identity: ordinals are kept as recorded.
  struct CudaDevice {
    opt_i64 pid, gpu, sm_count;
    int64_t cuda_id = 0;
    std::string uuid;  // gpu_uuid_key
  };
  std::vector<CudaDevice> cuda_devices;
  if (file_.has_table("TARGET_INFO_CUDA_DEVICE")) {
    Rows rows(file_, "TARGET_INFO_CUDA_DEVICE", {"gpuId", "cudaId", "numMultiprocessors", "pid", "uuid"});
    while (rows.next()) {
      if (rows.null(1)) continue;
      cuda_devices.push_back({rows.opt(3), rows.opt(0), rows.opt(2), rows.i64(1), gpu_uuid_key(rows.text(4))});
    }
  }
  // Each process's ordinal -> the GPU's store number, for the rows `gpu_of` resolves.
  auto per_process = [&](const auto& gpu_of) {
    std::vector<ProcessDevice> out;
    for (const auto& c : cuda_devices)
      if (c.pid)
        if (opt_i64 gpu = gpu_of(c)) out.push_back({*c.pid, c.cuda_id, *gpu});
    return out;
  };

  std::map<std::string, int64_t> device_of_bus;  // 2020.3: pci_bus_key(busLocation) -> TARGET_INFO_GPU.deviceId
  auto columns = file_.columns("TARGET_INFO_GPU");
  if (has_column(columns, "id")) {
    // 2022+: one row per GPU of the machine, used or not.
    struct Gpu {
      int64_t id;
      opt_i64 cu_device;
      std::string uuid;
      DeviceRow row;
    };
    std::vector<Gpu> gpus;
    std::string scratch;
    Rows rows(file_, "TARGET_INFO_GPU",
              {"id", "name", "totalMemory", "smCount", "cuDevice", "computeMajor", "computeMinor", "uuid"});
    while (rows.next()) {
      if (rows.null(0)) continue;
      Gpu g{rows.i64(0), rows.opt(4), gpu_uuid_key(rows.text(7)), {}};
      if (!rows.null(1)) g.row.name = std::string(utf8_text(rows.text(1), scratch));
      g.row.memory_bytes = rows.opt(2);
      g.row.sm_count = rows.opt(3);
      g.row.compute_major = rows.opt(5);
      g.row.compute_minor = rows.opt(6);
      gpus.push_back(std::move(g));
    }
    // The GPU's number: cuDevice (the CUDA ordinal nsys itself sees, which is what events carry
    // when no process narrows its view) when it tells every GPU apart, else the nsys GPU id.
    std::set<int64_t> cu_devices;
    for (const auto& g : gpus)
      if (g.cu_device) cu_devices.insert(*g.cu_device);
    bool cu_device_usable = cu_devices.size() == gpus.size();
    std::map<std::string, int64_t> gpu_of_uuid;
    for (auto& g : gpus) {
      int64_t device_id = cu_device_usable ? *g.cu_device : g.id;
      g.row.device_id = device_id;
      gpu_to_device_[g.id] = device_id;
      if (!g.uuid.empty()) gpu_of_uuid.emplace(g.uuid, g.id);
      devices_.insert_or_assign(device_id, g.row);
    }
    auto mapped = per_process([&](const CudaDevice& c) -> opt_i64 {
      if (c.gpu)
        if (auto it = gpu_to_device_.find(*c.gpu); it != gpu_to_device_.end()) return it->second;
      if (auto it = gpu_of_uuid.find(c.uuid); !c.uuid.empty() && it != gpu_of_uuid.end())
        return gpu_to_device_.at(it->second);
      return std::nullopt;
    });
    for (const auto& p : mapped)
      for (const auto& c : cuda_devices)
        if (c.pid == p.pid && c.cuda_id == p.cuda_id && c.sm_count && !devices_[p.gpu].sm_count)
          devices_[p.gpu].sm_count = c.sm_count;
    map_process_devices(mapped);
    has_gpu_table_ = !gpus.empty();
  } else if (has_column(columns, "deviceId")) {
    // 2020.3: five columns (vmId, deviceId, name, busLocation, isDiscrete).
    std::string scratch;
    Rows rows(file_, "TARGET_INFO_GPU", {"deviceId", "name", "busLocation"});
    while (rows.next()) {
      if (rows.null(0)) continue;
      DeviceRow d;
      d.device_id = rows.i64(0);
      if (!rows.null(1)) d.name = std::string(utf8_text(rows.text(1), scratch));
      if (std::string bus = pci_bus_key(rows.text(2)); !bus.empty()) device_of_bus[bus] = d.device_id;
      devices_.insert_or_assign(d.device_id, d);
      has_gpu_table_ = true;
    }
  } else {
    // No TARGET_INFO_GPU (2026.2 container captures) to number the GPUs: the nsys GPU id is the
    // number, the one GPU_METRICS typeId carries too.
    auto mapped = per_process([](const CudaDevice& c) { return c.gpu; });
    for (const auto& c : cuda_devices)
      if (c.pid && c.gpu) {
        DeviceRow& d = devices_[*c.gpu];
        d.device_id = *c.gpu;
        if (!d.sm_count) d.sm_count = c.sm_count;
        gpu_to_device_[*c.gpu] = *c.gpu;
        has_gpu_table_ = true;
      }
    map_process_devices(mapped);
  }
  if (file_.has_table("TARGET_INFO_CUDA_GPU") && !device_of_bus.empty()) {
    // 2020.3: each process's CUDA device with its PCI bus id; the bus names the physical GPU
    // (TARGET_INFO_GPU.busLocation). Exports that did not resolve the bus write <UNKNOWN_BUS_ID>.
    std::vector<ProcessDevice> by_bus;
    Rows rows(file_, "TARGET_INFO_CUDA_GPU", {"deviceId", "pid", "pciBusId"});
    while (rows.next()) {
      if (rows.null(0) || rows.null(1) || rows.null(2)) continue;
      if (auto it = device_of_bus.find(pci_bus_key(rows.text(2))); it != device_of_bus.end())
        by_bus.push_back({rows.i64(1), rows.i64(0), it->second});
    }
    map_process_devices(by_bus);
  }

  if (file_.has_table("TARGET_INFO_CUDA_GPU")) {
    // 2020.3: the CUDA properties, one row per (device, process).
    std::string scratch;
    Rows rows(file_, "TARGET_INFO_CUDA_GPU", {"deviceId", "name", "computeCapabilityMajor", "computeCapabilityMinor",
                                              "numMultiprocessors", "globalMemorySize", "pid"});
    while (rows.next()) {
      if (rows.null(0)) continue;
      int64_t device = *map_device(rows.opt(6), rows.i64(0));
      DeviceRow& d = devices_[device];
      d.device_id = device;
      if (!d.name && !rows.null(1)) d.name = std::string(utf8_text(rows.text(1), scratch));
      if (!d.compute_major) d.compute_major = rows.opt(2);
      if (!d.compute_minor) d.compute_minor = rows.opt(3);
      if (!d.sm_count) d.sm_count = rows.opt(4);
      // globalMemorySize is in MiB in this table (48601 for a 48 GB Quadro RTX 8000).
      if (!d.memory_bytes)
        if (auto mib = bounded(rows, 5, kMaxTransferBytes >> 20, "globalMemorySize")) d.memory_bytes = *mib << 20;
      has_gpu_table_ = true;
    }
  }

  // Ordinals that no GPU table resolved (no pid or gpuId): the SM count goes to the ordinal.
  if (device_of_process_.empty())
    for (const auto& c : cuda_devices) {
      if (!c.sm_count) continue;
      DeviceRow& d = devices_[c.cuda_id];
      d.device_id = c.cuda_id;
      if (!d.sm_count) d.sm_count = c.sm_count;
      has_gpu_table_ = true;
    }
}

void ExportReader::read_processes() {
  if (!file_.has_table("PROCESSES")) return;
  Rows rows(file_, "PROCESSES", {"globalPid", "pid", "name"});
  std::string scratch;
  while (rows.next()) {
    if (rows.null(1) && rows.null(0)) continue;
    int64_t pid = rows.null(1) ? pid_of_global_pid(rows.i64(0)) : rows.i64(1);
    if (!rows.null(0) && pid_of_global_pid(rows.i64(0)) != pid)
      issue(import_issue::pid_mismatch, "globalPid " + std::to_string(rows.i64(0)) + " pid " + std::to_string(pid),
            rows);
    w_.add_process(pid, utf8_text(rows.text(2), scratch));
    processes_from_table_ = true;
  }
}

// The rank of the profiled process, from the launcher's variables in its recorded environment
// (`srun nsys profile …` / `mpirun nsys profile …` / a per-rank torchrun wrapper: one export per
// rank). Only these integer values are read: the environment also holds secrets (nsys_sqlite_schemas
// .md), and nothing else of it is kept.
void ExportReader::read_launch_environment() {
  if (!file_.has_table("META_DATA_CAPTURE")) return;
  Rows rows(file_, "META_DATA_CAPTURE", {"name", "value"}, "WHERE name = 'PROCESS_0:ENVIRONMENT_VARIABLE'");
  // In order of preference: the framework's own variables, then the launcher's.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kPairs = {{{"RANK", "WORLD_SIZE"},
                                                                                          {"SLURM_PROCID", "SLURM_NTASKS"},
                                                                                          {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                                                                          {"PMIX_RANK", "PMIX_SIZE"},
                                                                                          {"PMI_RANK", "PMI_SIZE"}}};
  std::map<std::string_view, int64_t> found;
  auto wanted = [&](std::string_view key) -> std::optional<std::string_view> {
    for (const auto& [r, w] : kPairs) {
      if (key == r) return r;
      if (key == w) return w;
    }
    return std::nullopt;
  };
  while (rows.next()) {
    std::string_view text = rows.text(1);
    size_t eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    auto key = wanted(text.substr(0, eq));
    if (!key) continue;
    std::string_view digits = text.substr(eq + 1);
    int64_t v = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || end != digits.data() + digits.size() || v < 0 || v > (int64_t{1} << 24)) continue;
    found.emplace(*key, v);
  }
  for (const auto& [r, w] : kPairs) {
    auto rank = found.find(r), world = found.find(w);
    if (rank == found.end() || world == found.end() || world->second < 2 || rank->second >= world->second) continue;
    w_.set_rank(rank->second, world->second, std::nullopt);
    return;
  }
}

void ExportReader::read_threads() {
  if (!file_.has_table("ThreadNames")) return;
  Rows rows(file_, "ThreadNames", {"nameId", "globalTid"});
  std::string scratch;
  while (rows.next()) {
    if (rows.null(1)) continue;
    HostIds ids = decode_global_tid(rows.i64(1));
    std::string_view name = rows.null(0) ? std::string_view() : string_or_placeholder(rows.i64(0), scratch, rows);
    w_.add_thread(ids.pid, ids.tid, name);
    // Exports without PROCESSES (2020.3): a process's main thread (tid == pid) carries its name.
    if (!processes_from_table_ && ids.tid == ids.pid) w_.add_process(ids.pid, name);
  }
}

void ExportReader::read_kernels() {
  if (!file_.has_table(kKernel)) return;
  enum { kStart, kEnd, kDevice, kStream, kGlobalPid, kCorrelation, kDemangled, kShort, kGridX, kGridY, kGridZ,
         kBlockX, kBlockY, kBlockZ, kRegisters, kStaticShared, kDynamicShared, kContext, kGraphId, kGraphNodeId };
  Rows rows(file_, kKernel, kKernelColumns);
  std::string scratch;
  const bool collect_names = !has_gpu_table_;
  while (rows.next()) {
    w_.count_event();
    auto span = interval(rows, kStart, kEnd);
    if (!span) continue;
    KernelRow k;
    k.start_ns = span->first;
    k.dur_ns = span->second;
    k.stream_id = rows.opt(kStream);
    if (!rows.null(kGlobalPid)) k.pid = pid_of_global_pid(rows.i64(kGlobalPid));
    k.device_id = map_device(k.pid, rows.opt(kDevice));
    k.correlation_id = rows.opt(kCorrelation);
    opt_i64 name_id = rows.null(kDemangled) ? rows.opt(kShort) : rows.opt(kDemangled);
    if (name_id) {
      k.name = string_or_placeholder(*name_id, scratch, rows);
    } else {
      k.name = "<unnamed kernel>";
      issue(import_issue::kernel_without_name, "demangledName and shortName are NULL", rows);
    }
    k.grid_x = rows.opt(kGridX);
    k.grid_y = rows.opt(kGridY);
    k.grid_z = rows.opt(kGridZ);
    k.block_x = rows.opt(kBlockX);
    k.block_y = rows.opt(kBlockY);
    k.block_z = rows.opt(kBlockZ);
    k.registers_per_thread = rows.opt(kRegisters);
    if (!rows.null(kStaticShared) || !rows.null(kDynamicShared)) {
      // Shared memory per block is at most a few hundred KiB; 2^40 leaves room and no overflow.
      auto st = bounded(rows, kStaticShared, kMaxSharedMemoryBytes, "staticSharedMemory");
      auto dyn = bounded(rows, kDynamicShared, kMaxSharedMemoryBytes, "dynamicSharedMemory");
      if ((st || rows.null(kStaticShared)) && (dyn || rows.null(kDynamicShared)))
        k.shared_memory_bytes = st.value_or(0) + dyn.value_or(0);
    }
    // Kernels replayed by a CUDA graph carry its ids (graphNodeId since 2020.3, graphId since 2026.1; 0 = none).
    w_.add_graph_kernel(k, KernelGraphIds{rows.opt(kGraphId), rows.opt(kGraphNodeId)});
    note_activity(k.device_id, k.stream_id, k.pid, rows.opt(kContext));
    if (collect_names && k.device_id && name_id) device_kernel_names_.emplace(*k.device_id, *name_id);
  }
}

void ExportReader::read_memcpys() {
  if (!file_.has_table(kMemcpy)) return;
  enum { kStart, kEnd, kDevice, kStream, kGlobalPid, kCorrelation, kBytes, kCopyKind, kSrcKind, kDstKind, kContext };
  Rows rows(file_, kMemcpy, kMemcpyColumns);
  auto mem_kind = [&](int col) -> std::optional<std::string> {
    if (rows.null(col)) return std::nullopt;
    bool known = false;
    const std::string& word = mem_kinds_.decode(rows.i64(col), known);
    if (!known) issue(import_issue::unknown_memory_kind, std::to_string(rows.i64(col)), rows);
    return word;
  };
  while (rows.next()) {
    w_.count_event();
    auto span = interval(rows, kStart, kEnd);
    if (!span) continue;
    MemcpyRow m;
    m.start_ns = span->first;
    m.dur_ns = span->second;
    m.stream_id = rows.opt(kStream);
    if (!rows.null(kGlobalPid)) m.pid = pid_of_global_pid(rows.i64(kGlobalPid));
    m.device_id = map_device(m.pid, rows.opt(kDevice));
    m.correlation_id = rows.opt(kCorrelation);
    m.bytes = bounded(rows, kBytes, kMaxTransferBytes, "bytes");
    bool known = false;
    if (!rows.null(kCopyKind)) m.kind = memcpy_kinds_.decode(rows.i64(kCopyKind), known);
    if (!known)
      issue(import_issue::unknown_memcpy_kind, rows.null(kCopyKind) ? "NULL" : std::to_string(rows.i64(kCopyKind)),
            rows);
    m.src_kind = mem_kind(kSrcKind);
    m.dst_kind = mem_kind(kDstKind);
    w_.add_memcpy(m);
    note_activity(m.device_id, m.stream_id, m.pid, rows.opt(kContext));
  }
}

void ExportReader::read_memsets() {
  if (!file_.has_table(kMemset)) return;
  enum { kStart, kEnd, kDevice, kStream, kGlobalPid, kCorrelation, kBytes, kMemKind, kContext };
  Rows rows(file_, kMemset, kMemsetColumns);
  while (rows.next()) {
    w_.count_event();
    auto span = interval(rows, kStart, kEnd);
    if (!span) continue;
    MemsetRow m;
    m.start_ns = span->first;
    m.dur_ns = span->second;
    m.stream_id = rows.opt(kStream);
    if (!rows.null(kGlobalPid)) m.pid = pid_of_global_pid(rows.i64(kGlobalPid));
    m.device_id = map_device(m.pid, rows.opt(kDevice));
    m.correlation_id = rows.opt(kCorrelation);
    m.bytes = bounded(rows, kBytes, kMaxTransferBytes, "bytes");
    if (!rows.null(kMemKind)) {
      bool known = false;
      m.mem_kind = mem_kinds_.decode(rows.i64(kMemKind), known);
      if (!known) issue(import_issue::unknown_memory_kind, std::to_string(rows.i64(kMemKind)), rows);
    }
    w_.add_memset(m);
    note_activity(m.device_id, m.stream_id, m.pid, rows.opt(kContext));
  }
}

void ExportReader::read_syncs() {
  if (!file_.has_table(kSync)) return;
  enum { kStart, kEnd, kDevice, kStream, kGlobalPid, kCorrelation, kSyncType };
  Rows rows(file_, kSync, kSyncColumns);
  while (rows.next()) {
    w_.count_event();
    auto span = interval(rows, kStart, kEnd);
    if (!span) continue;
    SyncEventRow s;
    s.start_ns = span->first;
    s.dur_ns = span->second;
    s.stream_id = cupti_id(rows.opt(kStream));
    if (!rows.null(kGlobalPid)) s.pid = pid_of_global_pid(rows.i64(kGlobalPid));
    s.device_id = map_device(s.pid, cupti_id(rows.opt(kDevice)));
    s.correlation_id = rows.opt(kCorrelation);
    bool known = false;
    if (!rows.null(kSyncType)) s.kind = sync_kinds_.decode(rows.i64(kSyncType), known);
    if (!known)
      issue(import_issue::unknown_sync_type, rows.null(kSyncType) ? "NULL" : std::to_string(rows.i64(kSyncType)), rows);
    w_.add_sync_event(s);
  }
}

void ExportReader::read_runtime() {
  if (!file_.has_table(kRuntime)) return;
  enum { kStart, kEnd, kEventClass, kGlobalTid, kCorrelation, kNameId };
  Rows rows(file_, kRuntime, kRuntimeColumns);
  std::unordered_map<int64_t, std::string_view> names;           // nameId -> name without suffix
  std::unordered_map<int64_t, std::vector<ApiCallRow>> pending;  // globalTid -> recent calls
  std::deque<std::string> placeholders;  // stable storage for '<string N>' names of pending rows
  std::string scratch;
  while (rows.next()) {
    w_.count_event();
    auto span = interval(rows, kStart, kEnd);
    if (!span) continue;
    ApiCallRow a;
    a.start_ns = span->first;
    a.dur_ns = span->second;
    opt_i64 global_tid = rows.opt(kGlobalTid);
    if (global_tid) {
      HostIds ids = decode_global_tid(*global_tid);
      a.pid = ids.pid;
      a.tid = ids.tid;
    }
    a.correlation_id = rows.opt(kCorrelation);
    if (rows.null(kNameId)) {
      a.name = "<unnamed api call>";
      issue(import_issue::api_call_without_name, "nameId is NULL", rows);
    } else if (auto it = names.find(rows.i64(kNameId)); it != names.end()) {
      a.name = it->second;
    } else if (const std::string* s = strings_.find(rows.i64(kNameId))) {
      a.name = names.emplace(rows.i64(kNameId), strip_cupti_suffix(*s)).first->second;
    } else {
      a.name = placeholders.emplace_back(string_or_placeholder(rows.i64(kNameId), scratch, rows));
    }
    a.kind = api_kind(a.name, rows.opt(kEventClass));
    // Correlation id 0 means "none" to CUPTI: such calls are never twins of each other.
    if (!global_tid || !a.correlation_id || *a.correlation_id == 0) {
      w_.add_api_call(a);
      continue;
    }
    auto& window = pending[*global_tid];
    auto twin = std::find_if(window.begin(), window.end(),
                             [&](const ApiCallRow& p) { return p.correlation_id == a.correlation_id; });
    if (twin != window.end()) {
      // Nested duplicate: keep the outer call (earlier start, or same start and later end).
      int64_t end = a.start_ns + a.dur_ns, twin_end = twin->start_ns + twin->dur_ns;
      if (a.start_ns < twin->start_ns || (a.start_ns == twin->start_ns && end > twin_end)) *twin = a;
      continue;
    }
    if (window.size() >= kDedupWindow) {
      w_.add_api_call(window.front());
      window.erase(window.begin());
    }
    window.push_back(a);
  }
  // Flush in thread order so the output does not depend on hash order.
  std::vector<int64_t> threads;
  for (const auto& [tid, window] : pending) threads.push_back(tid);
  std::sort(threads.begin(), threads.end());
  for (int64_t tid : threads)
    for (const auto& a : pending[tid]) w_.add_api_call(a);
}

void ExportReader::read_nvtx_domains() {
  if (!file_.has_table(kNvtx)) return;
  auto columns = file_.columns(kNvtx);
  if (!has_column(columns, "eventType") || !has_column(columns, "domainId")) return;
  // Domain names come from the domain-create rows; reading them first keeps the main pass
  // single and lets ranges that precede their create row (other threads) still resolve.
  Rows rows(file_, kNvtx, kNvtxDomainColumns, nvtx_domain_clause());
  std::string scratch;
  while (rows.next()) {
    if (rows.null(0)) continue;
    int64_t domain = rows.i64(0);
    std::string name;
    if (!rows.null(1)) name = std::string(utf8_text(rows.text(1), scratch));
    else if (!rows.null(2)) name = std::string(string_or_placeholder(rows.i64(2), scratch, rows));
    else continue;
    int64_t pid = rows.null(3) ? -1 : decode_global_tid(rows.i64(3)).pid;
    domains_[{pid, domain}] = name;
    auto [it, fresh] = domains_by_id_.emplace(domain, name);
    if (!fresh && it->second != name) it->second.reset();  // same id, different names: ambiguous
  }
}

void ExportReader::read_nvtx() {
  if (!file_.has_table(kNvtx)) return;
  enum { kStart, kEnd, kType, kText, kTextId, kGlobalTid, kDomain };
  Rows rows(file_, kNvtx, kNvtxColumns);
  // Each event may carry a text of its own. The hint is bounded by the file's size (a row takes
  // more than 16 bytes), so that a damaged rowid cannot ask for a huge table.
  w_.expect_texts(static_cast<size_t>(std::min(table_rows(kNvtx), file_bytes() / 16)));
  std::string scratch, text_scratch;
  while (rows.next()) {
    w_.count_event();
    if (rows.null(kType)) {
      issue(import_issue::nvtx_event_without_type, "eventType is NULL", rows);
      continue;
    }
    int64_t type = rows.i64(kType);
    auto text = [&]() -> std::optional<std::string_view> {
      if (!rows.null(kText)) return utf8_text(rows.text(kText), text_scratch);
      if (!rows.null(kTextId)) return string_or_placeholder(rows.i64(kTextId), scratch, rows);
      return std::nullopt;
    };
    if (type == kNvtxMark) {
      issue(import_issue::nvtx_mark_skipped, text().value_or(""), rows);
      continue;
    }
    if (is_nvtx_metadata(type)) continue;
    if (type != kNvtxPushPopRange && type != kNvtxStartEndRange) {
      issue(import_issue::nvtx_unsupported_event_type, std::to_string(type), rows);
      continue;
    }
    if (rows.null(kEnd) && !rows.null(kStart)) {
      issue(import_issue::nvtx_range_without_end, text().value_or(""), rows);
      continue;
    }
    auto span = interval(rows, kStart, kEnd);
    if (!span) continue;
    RangeRow r;
    r.kind = "nvtx";
    r.start_ns = span->first;
    r.dur_ns = span->second;
    if (!rows.null(kGlobalTid)) {
      HostIds ids = decode_global_tid(rows.i64(kGlobalTid));
      r.pid = ids.pid;
      r.tid = ids.tid;
    }
    if (auto t = text()) {
      r.name = *t;
    } else {
      r.name = "<unnamed range>";
      issue(import_issue::nvtx_range_without_text, "text and textId are NULL", rows);
    }
    if (!torch_nvtx_ && is_torch_emit_nvtx(r.name)) torch_nvtx_ = true;
    if (torch_nvtx_) {
      // emit_nvtx's sequence number and input shapes, as Kineto records them on ops.
      EmitNvtxArgs args = emit_nvtx_args(r.name);
      if (args.seq) r.sequence_number = *args.seq;
      if (args.sizes) r.input_dims = std::string(*args.sizes);
    }
    if (!rows.null(kDomain) && rows.i64(kDomain) != 0) {
      int64_t domain = rows.i64(kDomain);
      auto it = domains_.find({r.pid.value_or(-1), domain});
      if (it != domains_.end()) {
        r.domain = it->second;
      } else if (auto by_id = domains_by_id_.find(domain); by_id != domains_by_id_.end() && by_id->second) {
        r.domain = *by_id->second;
      } else {
        issue(import_issue::nvtx_unknown_domain, std::to_string(domain), rows);
      }
    }
    w_.add_range(r);
  }
}

void ExportReader::read_memory_usage() {
  if (file_.columns(kMemoryUsage).empty()) return;
  enum { kStart, kDevice, kBytes, kOperation, kGlobalPid };
  Rows rows(file_, kMemoryUsage, kMemoryUsageColumns, memory_usage_clause());
  std::map<int64_t, int64_t> allocated;
  while (rows.next()) {
    w_.count_event();
    if (rows.null(kStart) || rows.null(kDevice) || rows.null(kBytes) || rows.null(kOperation)) {
      issue(import_issue::memory_event_incomplete, "start, deviceId, bytes or memoryOperationType is NULL", rows);
      continue;
    }
    bool known = false;
    const std::string& op = memory_ops_.decode(rows.i64(kOperation), known);
    auto bytes = bounded(rows, kBytes, kMaxTransferBytes, "bytes");
    if (!bytes) continue;
    int64_t delta = 0;
    if (op == "alloc") delta = *bytes;
    else if (op == "free") delta = -*bytes;
    else {
      issue(import_issue::unknown_memory_operation, std::to_string(rows.i64(kOperation)), rows);
      continue;
    }
    MemorySampleRow m;
    // The process's ordinal, like the activity tables' (the same GPU's totals add up).
    opt_i64 pid;
    if (!rows.null(kGlobalPid)) pid = pid_of_global_pid(rows.i64(kGlobalPid));
    m.device_id = *map_device(pid, rows.i64(kDevice));
    m.ts_ns = rows.i64(kStart);
    if (!in_time_range(m.ts_ns)) {
      issue(import_issue::timestamp_out_of_range, "start " + std::to_string(m.ts_ns), rows);
      continue;
    }
    int64_t& total = allocated[m.device_id];
    if (__builtin_add_overflow(total, delta, &total)) {
      issue(import_issue::value_out_of_range, "allocated bytes overflow after bytes " + std::to_string(*bytes), rows);
      total = 0;
      continue;
    }
    m.delta_bytes = delta;
    m.allocated_bytes = total;
    w_.add_memory_sample(m);
  }
}

void ExportReader::read_gpu_metrics() {
  if (!file_.has_table("GPU_METRICS")) return;
  std::map<std::pair<int64_t, int64_t>, std::string> by_type_and_id;
  std::map<int64_t, std::string> by_id;
  if (file_.has_table("TARGET_INFO_GPU_METRICS")) {
    Rows names(file_, "TARGET_INFO_GPU_METRICS", {"typeId", "metricId", "metricName"});
    std::string scratch;
    while (names.next()) {
      if (names.null(1) || names.null(2)) continue;
      std::string name(utf8_text(names.text(2), scratch));
      if (!names.null(0)) by_type_and_id.emplace(std::pair(names.i64(0), names.i64(1)), name);
      by_id.emplace(names.i64(1), name);
    }
  }
  enum { kTimestamp, kTypeId, kMetricId, kValue };
  Rows rows(file_, "GPU_METRICS", kMetricColumns);
  std::string scratch;
  // The samples are sample series (docs/samples.md), stored once: under canonical names where the
  // metric is known ("SMs Active [Throughput %]" -> sm_active, %), one series per GPU and name. The
  // `counter` view shows them too (schema/0010_nsys_samples_callers.sql).
  std::map<std::pair<int64_t, std::string>, size_t> series;
  while (rows.next()) {
    w_.count_event();
    if (rows.null(kTimestamp) || rows.null(kMetricId) || rows.null(kValue)) {
      issue(import_issue::gpu_metric_incomplete, "timestamp, metricId or value is NULL", rows);
      continue;
    }
    CounterRow c;
    c.ts_ns = rows.i64(kTimestamp);
    c.value = rows.real(kValue);
    int64_t metric = rows.i64(kMetricId);
    opt_i64 type = rows.opt(kTypeId);
    const std::string* name = nullptr;
    if (type)
      if (auto it = by_type_and_id.find({*type, metric}); it != by_type_and_id.end()) name = &it->second;
    if (!name)
      if (auto it = by_id.find(metric); it != by_id.end()) name = &it->second;
    if (name) {
      c.name = *name;
    } else {
      scratch = "metric " + std::to_string(metric);
      c.name = scratch;
      issue(import_issue::gpu_metric_without_name, scratch, rows);
    }
    // The low byte of typeId is the nsys GPU id (TARGET_INFO_GPU.id).
    if (type)
      if (auto it = gpu_to_device_.find(*type & 0xFF); it != gpu_to_device_.end()) c.device_id = it->second;
    auto key = std::pair(c.device_id ? *c.device_id : kNone, std::string(c.name));
    auto it = series.find(key);
    if (it == series.end()) {
      auto [name, unit] = samples::split_header(c.name);
      samples::MetricMap m = samples::map_metric(name, unit);
      SampleSeriesRow r;
      r.device_id = c.device_id;
      r.metric = m.metric.empty() ? std::string(c.name) : m.metric;
      r.unit = m.metric.empty() ? unit : m.unit;
      r.format = "nsys-gpu-metrics";
      it = series.emplace(key, w_.add_sample_series(r)).first;
    }
    w_.add_sample(it->second, c.ts_ns, c.value);
  }
}

void ExportReader::read_contexts() {
  // (pid, context) -> device for streams whose context ran no activity in this capture.
  for (const std::string table : {"TARGET_INFO_CUDA_CONTEXT_INFO", "TARGET_INFO_CUDA_NULL_STREAM"}) {
    if (!file_.has_table(table)) continue;
    Rows rows(file_, table, {"processId", "deviceId", "contextId"});
    while (rows.next())
      if (!rows.null(0) && !rows.null(1) && !rows.null(2))
        context_device_.emplace(std::pair(rows.i64(0), rows.i64(2)), *map_device(rows.i64(0), rows.i64(1)));
  }
}

void ExportReader::read_streams() {
  if (file_.has_table("TARGET_INFO_CUDA_NULL_STREAM")) {
    Rows rows(file_, "TARGET_INFO_CUDA_NULL_STREAM", {"deviceId", "streamId", "processId"});
    while (rows.next())
      if (!rows.null(0) && !rows.null(1)) w_.add_stream(*map_device(rows.opt(2), rows.i64(0)), rows.i64(1), std::nullopt);
  }
  if (file_.has_table("TARGET_INFO_CUDA_STREAM")) {
    Rows rows(file_, "TARGET_INFO_CUDA_STREAM", {"streamId", "processId", "contextId"});
    while (rows.next()) {
      if (rows.null(0) || rows.null(1) || rows.null(2)) continue;
      auto it = context_device_.find({rows.i64(1), rows.i64(2)});
      if (it == context_device_.end()) {
        issue(import_issue::stream_without_device, "stream " + std::to_string(rows.i64(0)), rows);
        continue;
      }
      w_.add_stream(it->second, rows.i64(0), std::nullopt);
    }
  }
  if (file_.has_table("TARGET_INFO_NVTX_CUDA_STREAM")) {
    Rows rows(file_, "TARGET_INFO_NVTX_CUDA_STREAM", {"deviceId", "streamId", "name", "processId"});
    std::string scratch;
    while (rows.next())
      if (!rows.null(0) && !rows.null(1))
        w_.add_stream(*map_device(rows.opt(3), rows.i64(0)), rows.i64(1),
                      rows.null(2) ? std::nullopt : std::optional<std::string_view>(utf8_text(rows.text(2), scratch)));
  }
  for (const auto& [device, stream] : streams_seen_) w_.add_stream(device, stream, std::nullopt);
}

void ExportReader::write_devices() {
  std::map<int64_t, std::vector<ArchHint>> hints;
  for (const auto& [device, name_id] : device_kernel_names_) {
    const std::string* name = strings_.find(name_id);
    if (!name) continue;
    if (auto h = arch_hint_from_kernel_name(*name)) hints[device].push_back(*h);
  }
  for (int64_t device : devices_seen_) {
    if (devices_.count(device)) continue;
    DeviceRow d;
    d.device_id = device;
    std::string note;
    if (has_gpu_table_) {
      w_.add_issue(import_issue::device_not_in_gpu_table, "device " + std::to_string(device), "table TARGET_INFO_GPU");
    } else {
      auto hint = combine_arch_hints(hints[device]);
      note = "device " + std::to_string(device) + ": no GPU table in the export; ";
      if (hint && hint->exact) {
        d.compute_major = hint->major;
        d.compute_minor = hint->minor;
        note += "compute capability " + std::to_string(hint->major) + "." + std::to_string(hint->minor) +
                " from arch-specific kernel names";
      } else if (hint) {
        note += "compute capability unknown (kernel names give only a lower bound of " + std::to_string(hint->major) +
                "." + std::to_string(hint->minor) + ")";
      } else {
        note += "compute capability unknown";
      }
      w_.add_issue(import_issue::device_inferred_from_kernel_names, note, "table " + kKernel);
    }
    devices_.emplace(device, d);
  }
  // Several processes on one device id, and nothing in the export says which GPU each means: they
  // may share one GPU, or each see a different GPU as that id (CUDA_VISIBLE_DEVICES per process).
  if (device_of_process_.empty())
    for (const auto& [device, pids] : pids_of_device_) {
      if (pids.size() < 2) continue;
      std::string list;
      for (int64_t pid : pids) list += (list.empty() ? "" : ", ") + std::to_string(pid);
      w_.add_issue(import_issue::device_shared_by_processes,
                   fmt::format("device {}: processes {} ran work on it and the export records no per-process GPU "
                               "identity (TARGET_INFO_CUDA_DEVICE pid/uuid): counted as one GPU",
                               device, list),
                   "table " + kKernel);
    }
  for (auto& [id, d] : devices_) {
    d.vendor = "nvidia";
    w_.add_device(d);
  }
}

}  // namespace proflint::nsys
