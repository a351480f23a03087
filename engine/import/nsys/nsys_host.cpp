// engine/import/nsys/nsys_host.cpp — OS runtime calls (OSRT_API) and CPU samples
// (COMPOSITE_EVENTS + SAMPLING_CALLCHAINS) of an Nsight Systems export: part of ExportReader.
//
// Variants (reference/nsys_sqlite_schemas.md): OSRT_API has correlationId in 2020.3 and not from
// 2022.2 on (neither is needed); 2020.3 writes two zero-length marker rows per process
// ('OS runtime libraries profiling started/finished', eventClass 31/32) that are not calls.
// SAMPLING_CALLCHAINS holds one chain per sample, keyed by COMPOSITE_EVENTS.id, a frame per
// stackDepth (0 = innermost); function names are StringIds ids in `symbol`, or inline text in
// `symbolName` in some exports. OSRT_CALLCHAINS (same layout, keyed by OSRT_API.callchainId) is
// the backtrace of an OS call: only its caller is kept (read_os_call_callers). A table without the columns it must have is reported once as
// `host_table_columns_missing` and skipped: the rest of the export still loads.
// CUDA_GRAPH_EVENTS (one row per CUDA graph node created, nsys --cuda-graph-trace=node) is read
// here too: its rows are host calls (the capture's launches, cudaGraphAdd*Node, the clones made by
// cudaGraphInstantiate).
#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/common/import_issue_kinds.hpp"
#include "engine/import/nsys/nsys_reader.hpp"

namespace proflint::nsys {

namespace {

const std::string kOsrt = "OSRT_API";
const std::string kOsrtChains = "OSRT_CALLCHAINS";
const std::string kComposite = "COMPOSITE_EVENTS";
const std::string kCallchains = "SAMPLING_CALLCHAINS";
const std::string kGraphEvents = "CUDA_GRAPH_EVENTS";

constexpr int64_t kOsrtProfilingStarted = 31;
constexpr int64_t kOsrtProfilingFinished = 32;

// The columns of `needed` that `table` lacks, joined with ", " (empty: all there).
std::string missing_columns(const ExportFile& file, const std::string& table, const std::vector<std::string_view>& needed) {
  auto have = file.columns(table);
  std::string out;
  for (auto n : needed)
    if (std::find(have.begin(), have.end(), n) == have.end()) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

}  // namespace

bool ExportReader::host_columns_present(const std::string& table, const std::vector<std::string_view>& needed) {
  std::string missing = missing_columns(file_, table, needed);
  if (missing.empty()) return true;
  w_.add_issue(import_issue::host_table_columns_missing, "no column " + missing, "table " + table);
  return false;
}

// Each OS call backtrace's caller (OSRT_CALLCHAINS, one row per frame, stackDepth 0 = the called
// function itself): the nearest frame above it that is resolved and outside the C runtime
// libraries. Chains with none (a thread's start routine only) have no entry.
std::unordered_map<int64_t, std::string> ExportReader::read_os_call_callers() {
  std::unordered_map<int64_t, std::string> callers;
  if (!file_.has_table(kOsrtChains) || !host_columns_present(kOsrtChains, {"id", "stackDepth", "symbol"})) return callers;
  enum { kId, kDepth, kSymbol, kModule, kUnresolved };
  Rows rows(file_, kOsrtChains, {"id", "stackDepth", "symbol", "module", "unresolved"}, "ORDER BY id, stackDepth");
  std::string scratch;
  int64_t done = -1;  // chain whose caller is found
  while (rows.next()) {
    if (rows.null(kId) || rows.null(kDepth) || rows.null(kSymbol) || rows.i64(kDepth) < 1) continue;
    int64_t id = rows.i64(kId);
    if (id == done || (!rows.null(kUnresolved) && rows.i64(kUnresolved) != 0)) continue;
    const std::string* module = rows.null(kModule) ? nullptr : strings_.find(rows.i64(kModule));
    if (module && is_c_runtime_module(*module)) continue;
    std::string_view name = string_or_placeholder(rows.i64(kSymbol), scratch, rows);
    if (name.substr(0, 2) == "0x") continue;  // an address nsys could not name
    callers.emplace(id, std::string(name));
    done = id;
  }
  return callers;
}

void ExportReader::read_os_calls() {
  if (!file_.has_table(kOsrt)) return;
  if (!host_columns_present(kOsrt, {"start", "end", "globalTid", "nameId"})) return;
  const std::unordered_map<int64_t, std::string> callers = read_os_call_callers();
  enum { kStart, kEnd, kEventClass, kGlobalTid, kNameId, kReturn, kNesting, kCallchain };
  Rows rows(file_, kOsrt,
            {"start", "end", "eventClass", "globalTid", "nameId", "returnValue", "nestingLevel", "callchainId"});
  std::string scratch;
  while (rows.next()) {
    w_.count_event();
    if (!rows.null(kEventClass) &&
        (rows.i64(kEventClass) == kOsrtProfilingStarted || rows.i64(kEventClass) == kOsrtProfilingFinished))
      continue;
    if (rows.null(kGlobalTid)) {
      issue(import_issue::os_call_without_thread, "globalTid is NULL", rows);
      continue;
    }
    auto span = interval(rows, kStart, kEnd);
    if (!span) continue;
    OsCallRow o;
    HostIds ids = decode_global_tid(rows.i64(kGlobalTid));
    o.pid = ids.pid;
    o.tid = ids.tid;
    o.start_ns = span->first;
    o.dur_ns = span->second;
    if (rows.null(kNameId)) {
      issue(import_issue::api_call_without_name, "OSRT_API nameId is NULL", rows);
      continue;
    }
    o.name = string_or_placeholder(rows.i64(kNameId), scratch, rows);
    o.return_value = rows.opt(kReturn);
    o.nesting_level = rows.opt(kNesting);
    if (!rows.null(kCallchain))
      if (auto it = callers.find(rows.i64(kCallchain)); it != callers.end()) o.caller = it->second;
    w_.add_os_call(o);
  }
}

// Node creation events (schema/0011_graph_node_events.sql). The table is absent from exports made
// without graph node tracing (and empty in most others); without the columns that tie a node to
// the thread and time of its creation it is skipped with one issue.
void ExportReader::read_graph_node_events() {
  if (!file_.has_table(kGraphEvents)) return;
  std::string missing = missing_columns(file_, kGraphEvents, {"start", "end", "globalTid", "nameId", "graphNodeId"});
  if (!missing.empty()) {
    w_.add_issue(import_issue::graph_table_columns_missing, "no column " + missing, "table " + kGraphEvents);
    return;
  }
  enum { kStart, kEnd, kEventClass, kGlobalTid, kNameId, kNode, kOriginal };
  Rows rows(file_, kGraphEvents, {"start", "end", "eventClass", "globalTid", "nameId", "graphNodeId", "originalGraphNodeId"});
  std::string scratch;
  while (rows.next()) {
    w_.count_event();
    if (rows.null(kNode) || rows.null(kGlobalTid) || rows.null(kNameId)) {
      issue(import_issue::graph_node_event_unusable,
            rows.null(kNode) ? "graphNodeId is NULL" : rows.null(kGlobalTid) ? "globalTid is NULL" : "nameId is NULL", rows);
      continue;
    }
    if (rows.i64(kNode) <= 0) {
      issue(import_issue::graph_node_event_unusable, "graphNodeId " + std::to_string(rows.i64(kNode)), rows);
      continue;
    }
    auto span = interval(rows, kStart, kEnd);
    if (!span) continue;
    GraphNodeEventRow e;
    HostIds ids = decode_global_tid(rows.i64(kGlobalTid));
    e.pid = ids.pid;
    e.tid = ids.tid;
    e.start_ns = span->first;
    e.dur_ns = span->second;
    e.name = std::string(strip_cupti_suffix(string_or_placeholder(rows.i64(kNameId), scratch, rows)));
    e.event_class = rows.opt(kEventClass);
    e.graph_node_id = rows.i64(kNode);
    e.original_graph_node_id = rows.opt(kOriginal);
    w_.add_graph_node_event(e);
  }
}

void ExportReader::read_cpu_samples() {
  if (!file_.has_table(kComposite)) return;
  if (!host_columns_present(kComposite, {"id", "start", "globalTid"})) return;
  // Call chains are optional: samples without them still say which thread ran when.
  const bool chains = file_.has_table(kCallchains) && host_columns_present(kCallchains, {"id", "stackDepth"});
  std::unique_ptr<Rows> frames;
  enum { kFrameId, kDepth, kSymbol, kModule, kSymbolName };
  bool frame_ready = false;
  if (chains) {
    frames = std::make_unique<Rows>(file_, kCallchains,
                                    std::vector<std::string_view>{"id", "stackDepth", "symbol", "module", "symbolName"},
                                    "ORDER BY id, stackDepth");
    frame_ready = frames->next();
  }
  enum { kId, kStart, kCpu, kGlobalTid };
  Rows rows(file_, kComposite, {"id", "start", "cpu", "globalTid"}, "ORDER BY id");
  std::vector<std::string> names, modules;  // this sample's frame texts (own storage: scratch is reused)
  std::vector<CpuFrameRow> chain;
  std::string scratch;
  while (rows.next()) {
    w_.count_event();
    if (rows.null(kGlobalTid)) {
      issue(import_issue::os_call_without_thread, "COMPOSITE_EVENTS globalTid is NULL", rows);
      continue;
    }
    if (rows.null(kStart) || rows.null(kId)) {
      issue(import_issue::missing_timestamp, rows.null(kStart) ? "start is NULL" : "id is NULL", rows);
      continue;
    }
    int64_t id = rows.i64(kId);
    names.clear();
    modules.clear();
    // Both tables are read in id order: skip chains of samples that are not there, take this one's.
    while (frame_ready && (frames->null(kFrameId) || frames->i64(kFrameId) < id)) frame_ready = frames->next();
    while (frame_ready && frames->i64(kFrameId) == id) {
      std::string name;
      if (!frames->null(kSymbol)) name = std::string(string_or_placeholder(frames->i64(kSymbol), scratch, *frames));
      else if (!frames->null(kSymbolName)) name = sanitize_utf8(frames->text(kSymbolName));
      else name = "<unknown frame>";
      names.push_back(std::move(name));
      const std::string* module = frames->null(kModule) ? nullptr : strings_.find(frames->i64(kModule));
      modules.push_back(module ? *module : std::string());
      frame_ready = frames->next();
    }
    if (chains && names.empty()) issue(import_issue::cpu_sample_without_callchain, "sample id " + std::to_string(id), rows);
    chain.clear();
    for (size_t i = 0; i < names.size(); ++i) chain.push_back({names[i], modules[i]});
    HostIds ids = decode_global_tid(rows.i64(kGlobalTid));
    CpuSampleRow s;
    s.pid = ids.pid;
    s.tid = ids.tid;
    s.cpu = rows.opt(kCpu);
    int64_t ts = rows.i64(kStart);
    if (ts < -(int64_t{1} << 61) || ts > (int64_t{1} << 61)) {
      issue(import_issue::timestamp_out_of_range, "start " + std::to_string(ts), rows);
      continue;
    }
    s.ts_ns = ts;
    s.frames = chain.data();
    s.frame_count = chain.size();
    w_.add_cpu_sample(s);
  }
}

}  // namespace proflint::nsys
