// tests/unit/kineto_import_test.cpp — the Kineto importer on small inline traces, one per format
// variant of reference/format_variants.md, checked row by row through SQL.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/pipeline/load.hpp"
#include "engine/common/error.hpp"
#include "engine/import/importer.hpp"
#include "engine/import/kineto/kineto_importer.hpp"
#include "engine/store/store.hpp"

namespace fs = std::filesystem;

namespace proflint {
namespace {

class KinetoImport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("proflint_kineto_import_" + std::to_string(getpid()) + "_" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& content) {
    auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  std::string write_gzip(const std::string& name, const std::string& content) {
    auto p = (dir_ / name).string();
    gzFile gz = gzopen(p.c_str(), "wb");
    gzwrite(gz, content.data(), static_cast<unsigned>(content.size()));
    gzclose(gz);
    return p;
  }
  ImportResult import(const std::string& name, const std::string& json) {
    return import_into(KinetoImporter(), write(name, json), store_, {});
  }
  int64_t num(const std::string& sql) {
    SQLite::Statement q(store_.db(), sql);
    EXPECT_TRUE(q.executeStep()) << sql;
    return q.getColumn(0).isNull() ? -999 : q.getColumn(0).getInt64();
  }
  std::string text(const std::string& sql) {
    SQLite::Statement q(store_.db(), sql);
    EXPECT_TRUE(q.executeStep()) << sql;
    return q.getColumn(0).isNull() ? "<null>" : q.getColumn(0).getString();
  }
  // All rows of a one-column query, '|'-separated.
  std::string column(const std::string& sql) {
    SQLite::Statement q(store_.db(), sql);
    std::string out;
    while (q.executeStep()) out += (out.empty() ? "" : "|") + (q.getColumn(0).isNull() ? std::string("<null>") : q.getColumn(0).getString());
    return out;
  }

  fs::path dir_;
  Store store_ = Store::create_in_memory();
};

// A current (2023+) trace: every category the importer keeps, distributedInfo after traceEvents.
const char* kModern = R"JSON({
  "schemaVersion": 1,
  "deviceProperties": [
    {"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 84990623744, "computeMajor": 8, "computeMinor": 0, "numSms": 108},
    {"id": 1, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 84990623744, "computeMajor": 8, "computeMinor": 0, "numSms": 108}
  ],
  "cupti_version": 22, "cuda_runtime_version": 12040,
  "host_name": "node7",
  "traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 100, "tid": 100, "ts": 1700000000000000.5, "dur": 5000, "args": {"External id": 1}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 100, "ts": 1700000000000100.25, "dur": 50.125,
     "args": {"External id": 2, "Input Dims": [[32, 64], [64, 16]], "Input type": ["float", "float"], "Sequence number": 77,
              "Fwd thread id": 0, "Call stack": "train.py(10): step;model.py(3): forward", "Module Hierarchy": "Net.fc"}},
    {"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#SGD.step", "pid": 100, "tid": 100, "ts": 1700000000004000, "dur": 100, "args": {"External id": 9}},
    {"ph": "X", "cat": "python_function", "name": "train.py(10): step", "pid": 100, "tid": 100, "ts": 1700000000000050, "dur": 4000, "args": {"Python id": 3}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100, "ts": 1700000000000110, "dur": 5, "args": {"External id": 2, "cbid": 211, "correlation": 501}},
    {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 100, "tid": 101, "ts": 1700000000000120, "dur": 4, "args": {"correlation": 502}},
    {"ph": "s", "id": 501, "pid": 100, "tid": 100, "ts": 1700000000000110, "cat": "ac2g", "name": "ac2g"},
    {"ph": "f", "id": 501, "pid": 1, "tid": 7, "ts": 1700000000000130, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "f", "id": 777, "pid": 100, "tid": 100, "ts": 1700000000000140, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "s", "id": 1, "pid": 100, "tid": 100, "ts": 1700000000000100, "cat": "fwdbwd", "name": "fwdbwd"},
    {"ph": "f", "id": 1, "pid": 100, "tid": 102, "ts": 1700000000003000, "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"},
    {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 1, "tid": 7, "ts": 1700000000000130.001, "dur": 20.5,
     "args": {"External id": 2, "queued": 0, "device": 1, "context": 1, "stream": 7, "correlation": 501, "registers per thread": 122,
              "shared memory": 12544, "blocks per SM": 5.9, "grid": [8, 16, 5], "block": [128, 1, 1], "est. achieved occupancy %": 25}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 1, "tid": 7, "ts": 1700000000000200, "dur": 3,
     "args": {"External id": 4, "device": 1, "stream": 7, "correlation": 503, "bytes": 92928, "memory bandwidth (GB/s)": 7.7}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 1, "tid": 7, "ts": 1700000000000300, "dur": 2,
     "args": {"device": 1, "stream": 7, "correlation": 504, "bytes": 4}},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 1, "tid": 20, "ts": 1700000000000400, "dur": 1,
     "args": {"device": 1, "stream": 20, "correlation": 505, "bytes": 512}},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 7, "ts": 1700000000000130, "dur": 4000, "args": {"External id": 1}},
    {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 1, "tid": 7, "ts": 1700000000000500, "dur": 9, "args": {"cuda_sync_kind": "Stream Sync", "stream": 7, "correlation": 15, "device": 1}},
    {"ph": "X", "cat": "cuda_sync", "name": "Event Sync", "pid": 1, "tid": -1, "ts": 1700000000000510, "dur": 4, "args": {"cuda_sync_kind": "Event Sync", "stream": -1, "correlation": 24, "device": 1}},
    {"ph": "X", "cat": "cuda_sync", "name": "Context Sync", "pid": 1, "tid": -1, "ts": 1700000000000520, "dur": 4, "args": {"device": 1}},
    {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 1, "tid": 20, "ts": 1700000000000530, "dur": 1, "args": {"stream": 20, "device": 1}},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 100, "tid": 100, "ts": 1700000000000600,
     "args": {"Total Reserved": 2097152, "Total Allocated": 1024, "Bytes": 512, "Addr": 1, "Device Id": 1, "Device Type": 1}},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 100, "tid": 100, "ts": 1700000000000610,
     "args": {"Total Reserved": 0, "Total Allocated": 64, "Bytes": -64, "Device Id": -1, "Device Type": 0}},
    {"ph": "X", "cat": "cuda_profiler_range", "name": "ampere_sgemm_128x64_nn", "pid": 1, "tid": 0, "ts": 1700000000000700, "dur": 100,
     "args": {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 38731776, "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum": 0}},
    {"ph": "C", "name": "GPU Memory", "pid": 100, "tid": 0, "ts": 1700000000000800, "args": {"used": 1.5, "label": "x"}},
    {"ph": "i", "name": "Iteration Start: PyTorch Profiler", "s": "g", "pid": "Traces", "tid": "Trace PyTorch Profiler", "ts": 1700000000000000},
    {"ph": "X", "cat": "Trace", "ts": 1700000000000000, "dur": 6000, "pid": "Spans", "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}},
    {"name": "process_name", "ph": "M", "ts": 1700000000000000, "pid": 100, "tid": 0, "args": {"name": "python3"}},
    {"name": "process_labels", "ph": "M", "ts": 1700000000000000, "pid": 100, "tid": 0, "args": {"labels": "CPU"}},
    {"name": "process_name", "ph": "M", "ts": 1700000000000000, "pid": 1, "tid": 0, "args": {"name": "python3"}},
    {"name": "process_labels", "ph": "M", "ts": 1700000000000000, "pid": 1, "tid": 0, "args": {"labels": "GPU 1"}},
    {"name": "process_sort_index", "ph": "M", "ts": 1700000000000000, "pid": 1, "tid": 0, "args": {"sort_index": 1}},
    {"name": "thread_name", "ph": "M", "ts": 1700000000000000, "pid": 1, "tid": 7, "args": {"name": "stream 7 "}},
    {"name": "thread_name", "ph": "M", "ts": 1700000000000000, "pid": 100, "tid": 100, "args": {"name": "thread 100 (python3)"}}
  ],
  "traceName": "x.json",
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 16, "pg_config": [{"pg_name": "0", "ranks": [0, 1]}]}
})JSON";

TEST_F(KinetoImport, ModernTraceEveryCategory) {
  ImportResult r = import("modern.json", kModern);
  EXPECT_EQ(r.issues, 0);
  EXPECT_EQ(num("SELECT count(*) FROM import_issue"), 0);
  // trace row
  EXPECT_EQ(text("SELECT format FROM trace"), "kineto");
  EXPECT_EQ(text("SELECT format_version FROM trace"), "1");
  EXPECT_EQ(text("SELECT framework FROM trace"), "pytorch");
  EXPECT_EQ(text("SELECT vendor FROM trace"), "nvidia");
  EXPECT_EQ(text("SELECT clock FROM trace"), "epoch");
  EXPECT_EQ(num("SELECT rank FROM trace"), 3);
  EXPECT_EQ(num("SELECT world_size FROM trace"), 16);
  EXPECT_EQ(text("SELECT comm_backend FROM trace"), "nccl");
  EXPECT_EQ(text("SELECT host_name FROM trace"), "node7");
  EXPECT_EQ(text("SELECT tool_version FROM trace"), "cupti_version=22 cuda_runtime_version=12040");
  EXPECT_EQ(num("SELECT event_count FROM trace"), 33);
  EXPECT_EQ(num("SELECT start_ns FROM trace"), int64_t{1700000000000000500});
  // devices: both listed GPUs, though only device 1 ran anything
  EXPECT_EQ(column("SELECT device_id || ':' || name || ':' || compute_major || '.' || compute_minor || ':' || sm_count || ':' || "
                   "memory_bytes || ':' || vendor FROM device ORDER BY device_id"),
            "0:NVIDIA A100-SXM4-80GB:8.0:108:84990623744:nvidia|1:NVIDIA A100-SXM4-80GB:8.0:108:84990623744:nvidia");
  // kernel: exact ns from float µs, launch geometry, ids
  EXPECT_EQ(column("SELECT device_id || ' ' || stream_id || ' ' || start_ns || ' ' || dur_ns || ' ' || name || ' ' || correlation_id || ' ' || "
                   "external_id || ' ' || grid_x || 'x' || grid_y || 'x' || grid_z || ' ' || block_x || 'x' || block_y || 'x' || block_z || ' ' || "
                   "registers_per_thread || ' ' || shared_memory_bytes FROM kernel"),
            "1 7 1700000000000130001 20500 ampere_sgemm_128x64_nn 501 2 8x16x5 128x1x1 122 12544");
  EXPECT_EQ(column("SELECT kind || ' ' || src_kind || ' ' || dst_kind || ' ' || bytes || ' ' || coalesce(external_id, '-') FROM memcpy ORDER BY start_ns"),
            "htod pageable device 92928 4|dtoh device pinned 4 -");
  EXPECT_EQ(column("SELECT device_id || ' ' || stream_id || ' ' || mem_kind || ' ' || bytes FROM memset"), "1 20 device 512");
  EXPECT_EQ(column("SELECT name || ' ' || kind || ' ' || tid || ' ' || correlation_id || ' ' || coalesce(external_id, '-') FROM api_call ORDER BY start_ns"),
            "cudaLaunchKernel runtime 100 501 2|cuLaunchKernel driver 101 502 -");
  // ranges
  EXPECT_EQ(column("SELECT kind || ':' || name FROM range ORDER BY start_ns, kind"),
            "user_annotation:ProfilerStep#3|python_function:train.py(10): step|cpu_op:aten::mm|gpu_user_annotation:ProfilerStep#3|"
            "other:ampere_sgemm_128x64_nn|user_annotation:Optimizer.step#SGD.step");
  EXPECT_EQ(text("SELECT input_dims || ' ' || input_types || ' ' || sequence_number || ' ' || fwd_thread_id || ' ' || module || ' ' || "
                 "external_id || ' ' || dur_ns || ' ' || start_ns FROM range WHERE kind = 'cpu_op'"),
            "[[32, 64], [64, 16]] [\"float\", \"float\"] 77 0 Net.fc 2 50125 1700000000000100250");
  EXPECT_EQ(text("SELECT call_stack FROM range WHERE kind = 'cpu_op'"), "train.py(10): step;model.py(3): forward");
  EXPECT_EQ(text("SELECT device_id || ' ' || tid || ' ' || coalesce(pid, '-') FROM range WHERE kind = 'gpu_user_annotation'"), "1 7 -");
  EXPECT_EQ(text("SELECT domain FROM range WHERE kind = 'other'"), "cuda_profiler_range");
  // flows: one pair each, the lone 'f' kept with a NULL source
  EXPECT_EQ(column("SELECT kind || ' ' || flow_id || ' ' || coalesce(src_pid, '-') || ' ' || coalesce(src_ts_ns, '-') || ' ' || "
                   "coalesce(dst_pid, '-') || ' ' || coalesce(dst_tid, '-') FROM flow ORDER BY kind, flow_id"),
            "ac2g 501 100 1700000000000110000 1 7|ac2g 777 - - 100 100|fwdbwd 1 100 1700000000000100000 100 102");
  // memory samples: CUDA device 1 and host (-1)
  EXPECT_EQ(column("SELECT device_id || ' ' || allocated_bytes || ' ' || reserved_bytes || ' ' || delta_bytes FROM memory_sample ORDER BY ts_ns"),
            "1 1024 2097152 512|-1 64 0 -64");
  EXPECT_EQ(column("SELECT kind || ' ' || device_id || ' ' || coalesce(stream_id, '-') FROM sync_event ORDER BY start_ns"),
            "stream_sync 1 7|event_sync 1 -|context_sync 1 -|stream_wait_event 1 20");
  // counters: range-profiler metrics and the 'C' event (non-numeric args skipped)
  EXPECT_EQ(column("SELECT name || '=' || value || '@' || coalesce(device_id, '-') FROM counter ORDER BY name"),
            "GPU Memory.used=1.5@-|smsp__sass_thread_inst_executed_op_ffma_pred_on.sum=38731776.0@1|"
            "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum=0.0@1");
  // names: streams from thread_name of GPU pids, processes without the "GPU 1" pseudo-process
  EXPECT_EQ(column("SELECT device_id || '/' || stream_id || '=' || coalesce(name, '<null>') FROM stream ORDER BY device_id, stream_id"),
            "1/7=stream 7|1/20=<null>");
  EXPECT_EQ(column("SELECT pid || '=' || name FROM process"), "100=python3");
  EXPECT_EQ(column("SELECT pid || '/' || tid || '=' || coalesce(name, '<null>') FROM thread ORDER BY tid"),
            "100/100=thread 100 (python3)|100/101=<null>");
}

// Jan-2021 Kineto: bare array, legacy categories, string tids, lower-case arg keys, memory events
// without a category, ProfilerStep recorded as an Operator.
const char* kLegacyBareArray = R"JSON([
  {"ph": "X", "cat": "Operator", "name": "ProfilerStep#5", "pid": 67844, "tid": "4093687616", "ts": 1606910596297000, "dur": 1000,
   "args": {"Input dims": [], "Device": 0, "External id": 1, "Trace name": "PyTorch Profiler", "Trace iteration": 0}},
  {"ph": "X", "cat": "Operator", "name": "aten::empty", "pid": 67844, "tid": "4093687616", "ts": 1606910596297023, "dur": 13,
   "args": {"Input dims": [[], [], []], "Input type": [], "Device": 0, "External id": 2}},
  {"ph": "X", "cat": "Runtime", "name": "cudaMemcpyAsync", "pid": 67844, "tid": "4093687616", "ts": 1606910596297100, "dur": 24,
   "args": {"cbid": 41, "correlation": 65460, "external id": 2, "external ts": 1606910596297023}},
  {"ph": "X", "cat": "Runtime", "name": "cuLaunchKernel", "pid": 67844, "tid": "4093687616", "ts": 1606910596297200, "dur": 4,
   "args": {"cbid": 307, "correlation": 65461, "external id": 2}},
  {"ph": "s", "id": 65460, "pid": 67844, "tid": 4093687616, "ts": 1606910596297100, "cat": "async", "name": "launch"},
  {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": "stream 7", "ts": 1606910596297130, "dur": 2353,
   "args": {"device": 0, "context": 1, "stream": 7, "correlation": 65460, "external id": 2, "bytes": 19267584}},
  {"ph": "f", "id": 65460, "pid": 0, "tid": "stream 7", "ts": 1606910596297130, "cat": "async", "name": "launch", "bp": "e"},
  {"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": "stream 7", "ts": 1606910596297500, "dur": 1,
   "args": {"device": 0, "stream": 7, "correlation": 60031, "external id": 0, "bytes": 1048576}},
  {"ph": "X", "cat": "Kernel", "name": "void cudnn::cnn::wgrad_alg0_engine<float>", "pid": 0, "tid": "stream 7", "ts": 1606910596297600, "dur": 379,
   "args": {"queued": 0, "device": 0, "stream": 7, "correlation": 65461, "external id": 2, "registers per thread": 80, "grid": [4, 1, 1], "block": [512, 1, 1]}},
  {"ph": "i", "s": "t", "name": "[memory]", "pid": 67844, "tid": 67844, "ts": 1606910596297700, "args": {"Device Type": 0, "Device Id": -1, "Bytes": 4}},
  {"ph": "i", "s": "t", "name": "[memory]", "pid": 67844, "tid": 67844, "ts": 1606910596297710, "args": {"Device Type": 1, "Device Id": 0, "Bytes": -4}},
  {"name": "thread_name", "ph": "M", "ts": 1606910596288053, "pid": 67844, "tid": "4093687616", "args": {"name": "thread 0 (python)"}},
  {"ph": "X", "cat": "Trace", "ts": 1606910596288053, "dur": 1292265, "pid": "Traces", "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}}
])JSON";

TEST_F(KinetoImport, LegacyBareArray) {
  ImportResult r = import("legacy.json", kLegacyBareArray);
  EXPECT_EQ(r.issues, 0);
  EXPECT_EQ(text("SELECT format_version FROM trace"), "<null>");
  EXPECT_EQ(text("SELECT framework FROM trace"), "pytorch");
  EXPECT_EQ(text("SELECT clock FROM trace"), "epoch");
  EXPECT_EQ(column("SELECT kind || ':' || name FROM range ORDER BY start_ns"), "user_annotation:ProfilerStep#5|cpu_op:aten::empty");
  EXPECT_EQ(text("SELECT input_dims FROM range WHERE name = 'aten::empty'"), "[[], [], []]");
  EXPECT_EQ(text("SELECT tid FROM range WHERE name = 'aten::empty'"), "4093687616");
  EXPECT_EQ(column("SELECT name || ' ' || kind || ' ' || external_id FROM api_call ORDER BY start_ns"),
            "cudaMemcpyAsync runtime 2|cuLaunchKernel driver 2");
  EXPECT_EQ(text("SELECT stream_id || ' ' || external_id || ' ' || correlation_id || ' ' || registers_per_thread FROM kernel"), "7 2 65461 80");
  EXPECT_EQ(text("SELECT kind || ' ' || src_kind || ' ' || bytes || ' ' || stream_id FROM memcpy"), "htod pageable 19267584 7");
  EXPECT_EQ(num("SELECT external_id FROM memset"), 0);
  EXPECT_EQ(text("SELECT kind || ' ' || src_pid || ' ' || src_tid || ' ' || dst_pid || ' ' || dst_tid FROM flow"), "ac2g 67844 4093687616 0 7");
  EXPECT_EQ(column("SELECT device_id || ' ' || delta_bytes FROM memory_sample ORDER BY ts_ns"), "-1 4|0 -4");
  // No deviceProperties: the device the events used still gets a row.
  EXPECT_EQ(column("SELECT device_id || ' ' || coalesce(name, '<null>') || ' ' || vendor FROM device"), "0 <null> nvidia");
  EXPECT_EQ(column("SELECT tid || '=' || name FROM thread"), "4093687616=thread 0 (python)");
}

// PyTorch without Kineto (Debian's python3-torch 1.13, CPU only): the autograd profiler's own
// Chrome export, as written by scripts/capture/ddp_gloo.py (lines cut from fixtures/captured/):
// bare array, no "cat", pid "CPU functions", µs from the profiler start, gloo collectives on the
// gloo worker threads.
TEST_F(KinetoImport, AutogradProfilerWithoutKineto) {
  ImportResult r = import("autograd.json", R"JSON([
  {"name": "ProfilerStep#3", "ph": "X", "ts": 153021, "dur": 61215, "tid": 1, "pid": "CPU functions", "args": {}},
  {"name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "ph": "X", "ts": 153036, "dur": 248, "tid": 1, "pid": "CPU functions", "args": {}},
  {"name": "aten::addmm", "ph": "X", "ts": 153400, "dur": 95, "tid": 1, "pid": "CPU functions", "args": {}},
  {"name": "c10d::allreduce_", "ph": "X", "ts": 190608, "dur": 259, "tid": 1, "pid": "CPU functions", "args": {}},
  {"name": "gloo:all_reduce", "ph": "X", "ts": 190639, "dur": 23196, "tid": 3, "pid": "CPU functions", "args": {}}
])JSON");
  EXPECT_EQ(r.issues, 0);
  EXPECT_EQ(text("SELECT framework || ' ' || clock FROM trace"), "pytorch monotonic");
  // The step, optimizer and DataLoader markers are annotations, everything else is an op.
  EXPECT_EQ(column("SELECT kind || ':' || name FROM range ORDER BY start_ns"),
            "user_annotation:ProfilerStep#3|user_annotation:enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__|"
            "cpu_op:aten::addmm|cpu_op:c10d::allreduce_|cpu_op:gloo:all_reduce");
  EXPECT_EQ(text("SELECT pid || '/' || tid || ' ' || start_ns || ' ' || dur_ns FROM range WHERE name = 'gloo:all_reduce'"),
            "0/3 190639000 23196000");
  EXPECT_EQ(column("SELECT pid || '/' || tid FROM thread ORDER BY tid"), "0/1|0/3");
}

TEST_F(KinetoImport, ComputePropertiesUseMajorMinorAndMultiProcessorCount) {
  import("cp.json", R"({"schemaVersion": 1, "computeProperties": [
      {"id": 0, "name": "Tesla V100-DGXS-32GB", "totalGlobalMem": 34084028416, "major": 7, "minor": 0, "multiProcessorCount": 80}],
    "traceEvents": [{"ph": "X", "cat": "Operator", "name": "aten::empty", "pid": 24572, "tid": "24572", "ts": 1621401187223197, "dur": 21, "args": {"Device": 24572, "External id": 2}}]})");
  EXPECT_EQ(text("SELECT name || ' ' || compute_major || '.' || compute_minor || ' ' || sm_count || ' ' || memory_bytes FROM device"),
            "Tesla V100-DGXS-32GB 7.0 80 34084028416");
}

// A compute capability beyond 0..999 (a corrupt or edited file) is left unknown with an issue: a
// major of INT64_MAX was once read back as INT32_MAX and multiplied by 10 in amp-not-used.
TEST_F(KinetoImport, ComputeCapabilityBeyond999IsLeftUnknown) {
  import("cc.json", R"({"schemaVersion": 1, "deviceProperties": [
      {"id": 0, "name": "G", "computeMajor": 9223372036854775807, "computeMinor": -1, "numSms": 80},
      {"id": 1, "name": "H", "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
    "traceEvents": [{"ph": "X", "cat": "Operator", "name": "aten::empty", "pid": 1, "tid": "1", "ts": 1000, "dur": 21}]})");
  EXPECT_EQ(text("SELECT group_concat(device_id || ':' || coalesce(compute_major, 'NULL') || '.' || coalesce(compute_minor, "
                 "'NULL') || ':' || sm_count, ' ') FROM (SELECT * FROM device ORDER BY device_id)"),
            "0:NULL.NULL:80 1:9.0:132");
  EXPECT_EQ(text("SELECT count || ' ' || example FROM import_issue WHERE kind = 'value_out_of_range'"),
            "2 compute capability 9223372036854775807");
}

TEST_F(KinetoImport, TraceLensMetadataFirstAndMonotonicClock) {
  // TraceLens writes a large `metadata` object first: more than the sniffer's head.
  std::string metadata = R"({"profiler": {"note": "brackets ] } [ { and \"quotes\" and traceEvents", "list": [)";
  for (int i = 0; i < 3000; ++i) metadata += std::to_string(i) + ", ";
  metadata += R"("end"]}})";
  std::string json = R"({"metadata": )" + metadata + R"(, "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1419247333430.849, "dur": 3.136, "args": {"device": 0, "stream": 7, "correlation": 1}}],
    "schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
    "displayTimeUnit": "ms", "baseTimeNanoseconds": 1751410836000000000})";
  ASSERT_GT(json.find(R"("traceEvents": [)"), 8192u);
  EXPECT_TRUE(KinetoImporter().sniff(json.substr(0, 4096), false));
  auto path = write("tracelens.json", json);
  import_file(path, store_, {});  // through the registry's sniffing
  EXPECT_EQ(text("SELECT start_ns || ' ' || dur_ns FROM kernel"), "1419247333430849 3136");
  EXPECT_EQ(text("SELECT clock FROM trace"), "monotonic");
  EXPECT_EQ(text("SELECT format_version FROM trace"), "1");
  EXPECT_EQ(num("SELECT sm_count FROM device"), 132);
  EXPECT_EQ(text("SELECT framework FROM trace"), "<null>");  // no CPU ops: nothing says PyTorch
}

TEST_F(KinetoImport, DisplayTimeUnitNsDoesNotChangeUnits) {
  import("ns.json", R"({"schemaVersion": 1, "displayTimeUnit": "ns", "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 1712195495519689.0, "dur": 63.813}]})");
  EXPECT_EQ(text("SELECT start_ns || ' ' || dur_ns FROM range"), "1712195495519689000 63813");
}

// The model keeps a kernel's launch configuration in 32 bits a value (KernelFact::launch); values
// beyond that, and NULLs, still reach the store as the profile has them.
TEST_F(KinetoImport, LaunchConfigurationKeptExactly) {
  import("launch.json", R"({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k_narrow", "pid": 1, "tid": 7, "ts": 100, "dur": 5,
     "args": {"device": 0, "stream": 7, "correlation": 1, "grid": [2147483647, 1, 3], "block": [256, 2, 1], "shared memory": 0}},
    {"ph": "X", "cat": "kernel", "name": "k_wide", "pid": 1, "tid": 7, "ts": 200, "dur": 5,
     "args": {"device": 0, "stream": 7, "correlation": 2, "grid": [5000000000, 1, 1], "block": [-2147483648, 1, 1],
              "registers per thread": 32}}]})");
  EXPECT_EQ(column("SELECT name || ':' || grid_x || ',' || grid_y || ',' || grid_z || ',' || block_x || ',' || block_y || ',' || "
                   "block_z || ',' || coalesce(registers_per_thread, 'null') || ',' || coalesce(shared_memory_bytes, 'null') "
                   "FROM kernel ORDER BY start_ns"),
            "k_narrow:2147483647,1,3,256,2,1,null,0|k_wide:5000000000,1,1,-2147483648,1,1,32,null");
}

TEST_F(KinetoImport, AmdTraceWithEmptyDeviceNames) {
  import("amd.json", R"JSON({"schemaVersion": 1, "deviceProperties": [
      {"id": 0, "name": "", "totalGlobalMem": 68702699520, "computeMajor": 9, "computeMinor": 0, "numSms": 104},
      {"id": 2, "name": "", "computeMajor": 9, "computeMinor": 0, "numSms": 104}],
    "traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpyWithStream", "pid": "597913", "tid": "597913", "ts": 4203669603438.301, "dur": 60.204,
     "args": {"External id": 8, "stream": "0x0", "cid": 153, "correlation": 117, "size": "2560", "kind": "1"}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Host -> Device)", "pid": 2, "tid": 0, "ts": 4203669603454.206, "dur": 22.441,
     "args": {"External id": 8, "device": 2, "stream": 0, "correlation": 117, "kind": "HtoD"}},
    {"ph": "X", "cat": "kernel", "name": "Cijk_Alik_Bljk_SB_MT64x16x32_MI16x16x1", "pid": 2, "tid": 0, "ts": 4203669603500, "dur": 5,
     "args": {"device": 2, "stream": 0, "correlation": 118, "kind": "Dispatch Kernel", "grid": [65536, 1, 1], "block": [256, 1, 1]}}]})JSON");
  EXPECT_EQ(text("SELECT vendor FROM trace"), "amd");
  EXPECT_EQ(column("SELECT device_id || ' ' || vendor || ' [' || name || ']' FROM device ORDER BY device_id"), "0 amd []|2 amd []");
  EXPECT_EQ(text("SELECT pid || ' ' || tid || ' ' || kind || ' ' || name FROM api_call"), "597913 597913 runtime hipMemcpyWithStream");
  EXPECT_EQ(text("SELECT kind || ' ' || src_kind || ' ' || dst_kind || ' ' || device_id FROM memcpy"), "htod unknown device 2");
  EXPECT_EQ(text("SELECT clock FROM trace"), "monotonic");
}

TEST_F(KinetoImport, MtiaRuntimeAndDeviceEvents) {
  import("mtia.json", R"({"schemaVersion": 1, "deviceProperties": [{"id": 17, "name": "ARTEMIS", "runtimeMajorVersion": 1, "runtimeMinorVersion": 30}],
    "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::narrow", "pid": 865, "tid": 1457, "ts": 701805248152.432, "dur": 10.666, "args": {"External id": 12296}},
    {"ph": "X", "cat": "mtia_runtime", "name": "recordEvent", "pid": 865, "tid": 1837, "ts": 701805175643.828, "dur": 6.44,
     "args": {"correlation": 21600000, "device": 17, "stream_id": "108", "cmd_name": "Event#4146851"}},
    {"ph": "X", "cat": "mtia_ccp_events", "name": "event_wait", "pid": 17, "tid": 3774, "ts": 701805074372.596, "dur": 15863.105,
     "args": {"stream": 108, "wait_on_stream": 104, "seq_num": 550218}},
    {"ph": "X", "cat": "mtia_insight", "name": "x", "pid": 17, "tid": 1, "ts": 701805074372.596, "dur": 1}]})");
  EXPECT_EQ(text("SELECT vendor FROM trace"), "mtia");
  EXPECT_EQ(text("SELECT device_id || ' ' || name || ' ' || vendor || ' ' || coalesce(compute_major, '-') FROM device"), "17 ARTEMIS mtia -");
  EXPECT_EQ(text("SELECT kind || ' ' || name || ' ' || correlation_id FROM api_call"), "other recordEvent 21600000");
  EXPECT_EQ(text("SELECT device_id || ' ' || stream_id || ' ' || name || ' ' || dur_ns FROM kernel"), "17 108 event_wait 15863105");
  EXPECT_EQ(num("SELECT count(*) FROM import_issue"), 0);
}

TEST_F(KinetoImport, CpuOnlyTraceIsFine) {
  ImportResult r = import("cpu.json", R"({"schemaVersion": 1, "deviceProperties": [],
    "distributedInfo": {"backend": "gloo", "rank": 34, "world_size": 300},
    "traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#551", "pid": 1074, "tid": 1074, "ts": 1212075548353.304, "dur": 173209.713}]})");
  EXPECT_EQ(r.rows, 1);
  EXPECT_EQ(num("SELECT count(*) FROM kernel"), 0);
  EXPECT_EQ(num("SELECT count(*) FROM device"), 0);
  EXPECT_EQ(text("SELECT rank || '/' || world_size || ' ' || comm_backend FROM trace"), "34/300 gloo");
}

// Broken events are counted by kind with an example and a byte offset; the rest is kept.
TEST_F(KinetoImport, BrokenEventsAreCountedAndSkipped) {
  std::string json = R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "good", "pid": 0, "tid": 7, "ts": 100, "dur": 5},
    {"ph": "X", "cat": "kernel", "name": "no ts", "pid": 0, "tid": 7, "dur": 5},
    {"ph": "X", "cat": "kernel", "name": "no ts 2", "pid": 0, "tid": 7, "dur": 5},
    {"ph": "X", "cat": "kernel", "name": "text dur", "pid": 0, "tid": 7, "ts": 100, "dur": "fast"},
    {"ph": "X", "cat": "kernel", "name": "negative", "pid": 0, "tid": 7, "ts": 100, "dur": -3},
    {"ph": "X", "cat": "kernel", "name": "no dur", "pid": 0, "tid": 7, "ts": 100},
    {"ph": "X", "cat": "kernel", "name": "nan", "pid": 0, "tid": 7, "ts": NaN, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "huge", "pid": 0, "tid": 7, "ts": 1e300, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "big pid", "pid": 99999999999999999999999, "tid": 7, "ts": 200, "dur": 1},
    {"ph": "Q", "cat": "kernel", "name": "bad ph", "ts": 1},
    {"ph": "B", "cat": "cpu_op", "name": "begin", "ts": 1},
    {"cat": "kernel", "name": "no ph", "ts": 1},
    {"ph": "X", "cat": "gpu_frobnicate", "name": "x", "pid": 0, "tid": 7, "ts": 100, "dur": 5},
    {"ph": "X", "cat": "gpu_frobnicate", "name": "y", "pid": 0, "tid": 7, "ts": 100, "dur": 5},
    {"ph": "X", "name": "no cat", "pid": 0, "tid": 7, "ts": 100, "dur": 5},
    [1, 2, 3],
    {"ph": "X", "cat": "kernel", "name": "bad utf8 )" "\xff\xfe" R"(", "pid": 0, "tid": 7, "ts": 100, "dur": 5},
    {"ph": "X", "cat": "cpu_op", "name": "deep", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"x": )" +
                     std::string(3000, '[') + std::string(3000, ']') + R"(}},
    {"ph": "X", "cat": "cpu_op", "name": ")" + std::string(100000, 'h') + R"(", "pid": 1, "tid": 1, "ts": 300, "dur": 1}
  ]})";
  ImportResult r = import("broken.json", json);
  EXPECT_EQ(column("SELECT kind || '=' || count FROM import_issue ORDER BY kind"),
            "bad_duration=1|bad_timestamp=2|event_not_an_object=1|event_without_category=1|event_without_dur=1|event_without_ph=1|"
            "event_without_ts=2|invalid_event_json=1|negative_duration=1|range_name_truncated=1|unknown_category=2|unknown_phase=1|"
            "unsupported_phase=1");
  EXPECT_EQ(r.issues, 16);
  // Nesting deeper than simdjson's limit inside an arg we never read is skipped, not an error.
  EXPECT_EQ(num("SELECT count(*) FROM range WHERE name = 'deep'"), 1);
  EXPECT_EQ(text("SELECT example FROM import_issue WHERE kind = 'unknown_category'"), "gpu_frobnicate");
  EXPECT_EQ(text("SELECT example FROM import_issue WHERE kind = 'negative_duration'"), "-3");
  EXPECT_EQ(text("SELECT example FROM import_issue WHERE kind = 'event_without_ts'"), "no ts");
  EXPECT_EQ(text("SELECT location FROM import_issue WHERE kind = 'event_without_ts'"), "byte " + std::to_string(json.find("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"no ts\"")));
  EXPECT_EQ(column("SELECT name || ' ' || coalesce(device_id, '-') FROM kernel ORDER BY start_ns"), "good 0|big pid -");
  // The 100,000-character op name is kept, cut to the 64 KiB name bound (StoreWriter::kMaxNameBytes).
  EXPECT_EQ(num("SELECT length(name) FROM range WHERE start_ns = 300000"), 65536);
  EXPECT_EQ(num("SELECT event_count FROM trace"), 19);
}

TEST_F(KinetoImport, HostileTopLevelValues) {
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::string json = R"({"cupti_version": )" + deep + R"(, "deviceProperties": )" + deep + R"(, "schemaVersion": {"a": )" + deep +
                     R"(}, "host_name": "bad \xff\xfe name", "distributedInfo": "not an object",
    "traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]})";
  json.replace(json.find("\\xff\\xfe"), 8, "\xff\xfe");
  ImportResult r = import("hostile.json", json);
  EXPECT_EQ(r.rows, 1);
  EXPECT_EQ(text("SELECT coalesce(format_version, '-') || ' ' || coalesce(tool_version, '-') || ' ' || coalesce(host_name, '-') FROM trace"), "- - -");
  EXPECT_EQ(column("SELECT kind || '=' || count FROM import_issue"), "invalid_top_level_value=1");
}

TEST_F(KinetoImport, TimesAndBytesBeyondWhatAProfileCanMeanAreDropped) {
  // Issue 20: values within int64 one by one whose sums are not. Limits are StoreWriter's:
  // times beyond +-2^61 ns (2.306e18), durations of one trace adding up past 2^56 ns (7.2e16),
  // byte counts beyond 2^50 (1.1e15).
  std::string json = R"J({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "ok", "pid": 0, "tid": 7, "ts": 100, "dur": 5},
    {"ph": "X", "cat": "kernel", "name": "late", "pid": 0, "tid": 7, "ts": 2400000000000000, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "early", "pid": 0, "tid": 7, "ts": -2400000000000000, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "ends late", "pid": 0, "tid": 7, "ts": 100, "dur": 2305843009213694},
    {"ph": "X", "cat": "cpu_op", "name": "long1", "pid": 1, "tid": 1, "ts": 100, "dur": 40000000000000},
    {"ph": "X", "cat": "cpu_op", "name": "long2", "pid": 1, "tid": 1, "ts": 100, "dur": 40000000000000},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 7, "ts": 200, "dur": 1,
     "args": {"device": 0, "stream": 7, "bytes": 2000000000000000}},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 210, "dur": 1,
     "args": {"device": 0, "stream": 7, "bytes": -5}},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 9000000000000000,
     "args": {"Total Reserved": 1, "Total Allocated": 1, "Bytes": 1, "Device Id": 0, "Device Type": 1}}
  ]})J";
  import("limits.json", json);
  EXPECT_EQ(column("SELECT kind || '=' || count FROM import_issue ORDER BY kind"),
            "duration_total_out_of_range=1|memcpy_bytes_out_of_range=1|memory_sample_time_out_of_range=1|"
            "memset_bytes_out_of_range=1|timestamp_out_of_range=3");
  // The first 4e16 ns op fits the budget, the second (8e16 > 2^56 = 7.21e16) does not.
  EXPECT_EQ(column("SELECT name FROM kernel ORDER BY start_ns"), "ok");
  EXPECT_EQ(column("SELECT name FROM range ORDER BY start_ns"), "long1");
  EXPECT_EQ(column("SELECT coalesce(bytes, 'null') FROM memcpy UNION ALL SELECT coalesce(bytes, 'null') FROM memset"), "null|null");
  EXPECT_EQ(text("SELECT location FROM import_issue WHERE kind = 'timestamp_out_of_range'"),
            "byte " + std::to_string(json.find("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"late\"")));
  EXPECT_EQ(num("SELECT count(*) FROM memory_sample"), 0);
}

TEST_F(KinetoImport, GzipAndConcatenatedMembers) {
  std::string a = R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 1, "dur": 1},)";
  std::string b = R"({"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 2, "dur": 1}]})";
  auto pa = write_gzip("a.gz", a);
  auto pb = write_gzip("b.gz", b);
  std::ifstream fa(pa, std::ios::binary), fb(pb, std::ios::binary);
  std::string both((std::istreambuf_iterator<char>(fa)), {});
  both.append(std::istreambuf_iterator<char>(fb), {});
  auto path = write("both.json.gz", both);
  import_into(KinetoImporter(), path, store_, {});
  EXPECT_EQ(column("SELECT name FROM kernel ORDER BY start_ns"), "k1|k2");
  EXPECT_EQ(text("SELECT file_bytes FROM trace"), std::to_string(both.size()));
}

TEST(KinetoSniff, AnyJsonObjectOrArrayAfterWhitespaceOrBom) {
  KinetoImporter k;
  EXPECT_TRUE(k.sniff("{\"traceEvents\": [", false));
  EXPECT_TRUE(k.sniff("\xEF\xBB\xBF\n  [{\"ph\": \"X\"}", true));
  EXPECT_TRUE(k.sniff("{\"metadata\": {", true));
  EXPECT_FALSE(k.sniff("SQLite format 3", false));
  EXPECT_FALSE(k.sniff("hello", false));
  EXPECT_FALSE(k.sniff("   ", false));
  EXPECT_FALSE(k.sniff("", false));
}

}  // namespace
}  // namespace proflint
