// tests/unit/nsys_importer_test.cpp — the nsys importer on tiny exports written by the test:
// the column sets of nsys 2020.3, 2022.2 and 2026.2, with the quirks real exports have
// (nested duplicate runtime rows, _vNNNN suffixes, columns added after export, no GPU table,
// ENUM tables present or absent, environment dumps that must not reach the store).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/pipeline/load.hpp"
#include "engine/common/error.hpp"
#include "engine/import/importer.hpp"
#include "engine/import/nsys/nsys_importer.hpp"
#include "engine/store/model_io.hpp"
#include "engine/store/store.hpp"
#include "tests/support/realdata.hpp"

namespace fs = std::filesystem;

namespace proflint {
namespace {

constexpr int64_t kVm = int64_t{1} << 48;
int64_t gpid(int64_t pid) { return kVm | (pid << 24); }
int64_t gtid(int64_t pid, int64_t tid) { return gpid(pid) | tid; }
std::string n(int64_t v) { return std::to_string(v); }

// Column lists as nsys writes them (reference/nsys_sqlite_schemas.md).
const char* kKernel2020 =
    "start, end, deviceId, contextId, streamId, correlationId, globalPid, demangledName, shortName, launchType, "
    "cacheConfig, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, "
    "dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId, sharedMemoryExecuted, graphNodeId";
const char* kNvtx2020 =
    "start, end, eventType, rangeId, category, color, text, globalTid, endGlobalTid, textId, domainId, uint64Value, "
    "int64Value, doubleValue, uint32Value, int32Value, floatValue, jsonTextId, jsonText";
const char* kMemcpy2020 =
    "start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind, deprecatedSrcId, srcKind, "
    "dstKind, srcDeviceId, srcContextId, dstDeviceId, dstContextId, graphNodeId";
const char* kGpu2022 =
    "vmId, id, name, busLocation, isDiscrete, l2CacheSize, totalMemory, memoryBandwidth, clockRate, smCount, pwGpuId, "
    "uuid, luid, chipName, cuDevice, ctxswDevPath, ctrlDevPath, revision, nodeMask, constantMemory, maxIPC, "
    "maxRegistersPerBlock, maxShmemPerBlock, maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, threadsPerWarp, "
    "asyncEngines, maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock, maxBlockDimX, maxBlockDimY, maxBlockDimZ, "
    "maxGridDimX, maxGridDimY, maxGridDimZ, computeMajor, computeMinor, smMajor, smMinor";

class NsysImport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("proflint_nsys_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string make_db(const std::string& name, const std::string& sql) {
    std::string path = (dir_ / name).string();
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
    return path;
  }

  ImportResult import(const std::string& path) { return import_into(NsysImporter(), path, store_, ImportOptions{}); }

  // Every row of `sql` as 'a|b|c' (NULL spelled NULL), in the query's order.
  std::vector<std::string> rows(const std::string& sql) {
    std::vector<std::string> out;
    SQLite::Statement q(store_.db(), sql);
    while (q.executeStep()) {
      std::string line;
      for (int i = 0; i < q.getColumnCount(); ++i) {
        if (i) line += "|";
        line += q.getColumn(i).isNull() ? std::string("NULL") : q.getColumn(i).getString();
      }
      out.push_back(line);
    }
    return out;
  }
  std::string one(const std::string& sql) {
    auto r = rows(sql);
    return r.empty() ? std::string("<no row>") : r.front();
  }
  int64_t issue_count(const std::string& kind) {
    auto r = rows("SELECT count FROM import_issue WHERE kind = '" + kind + "'");
    return r.empty() ? 0 : std::stoll(r.front());
  }
  // Every text value in every table of the store, for leak checks.
  std::vector<std::string> all_store_text() {
    std::vector<std::string> texts;
    for (const auto& table : rows("SELECT name FROM sqlite_master WHERE type = 'table'")) {
      SQLite::Statement q(store_.db(), "SELECT * FROM \"" + table + "\"");
      while (q.executeStep())
        for (int i = 0; i < q.getColumnCount(); ++i)
          if (q.getColumn(i).isText()) texts.push_back(q.getColumn(i).getString());
    }
    return texts;
  }

  fs::path dir_;
  Store store_ = Store::create_in_memory();
};

std::string schema_2020() {
  std::ostringstream s;
  s << "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
       "INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'cuLaunchKernel'),"
       " (3, 'void saxpy(int, float, float *, float *)'), (4, 'saxpy'), (5, 'cudaMemcpyAsync_v3020'),"
       " (6, 'range via id'), (7, 'python3');"
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (" << kKernel2020 << ");"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
       " (1000, 1500, 0, 1, 7, 10, " << gpid(4242) << ", 3, 4, 1, 0, 32, 4, 1, 1, 256, 1, 1, 1024, 512, 0, 0, 1, 0, NULL),"
       " (2000, 1900, 0, 1, 7, 11, " << gpid(4242) << ", 3, 4, 1, 0, 32, 4, 1, 1, 256, 1, 1, 0, 0, 0, 0, 2, 0, NULL),"
       " (3000, 3100, 0, 1, 7, 12, " << gpid(4242) << ", NULL, 4, 1, 0, 16, 2, 2, 1, 64, 2, 1, NULL, NULL, 0, 0, 3, 0, NULL);"
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue);"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES"
       " (900, 1100, 0, " << gtid(4242, 4243) << ", 10, 1, 0),"
       " (2900, 3050, 1, " << gtid(4242, 4243) << ", 12, 2, 0),"
       " (3200, 3300, 0, " << gtid(4242, 4243) << ", 13, 5, 0),"
       " (4000, 4010, 0, " << gtid(4242, 4243) << ", 14, 99, 0);"
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (" << kMemcpy2020 << ");"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES"
       " (3300, 3400, 0, 1, 7, 13, " << gpid(4242) << ", 4096, 1, NULL, 0, 2, 0, 1, 0, 1, NULL),"
       " (3400, 3450, 0, 1, 8, 15, " << gpid(4242) << ", 8, 10, NULL, 2, 2, 0, 1, 1, 2, NULL),"
       " (3450, 3460, 0, 1, 8, 16, " << gpid(4242) << ", 8, 42, NULL, 1, 9, 0, 1, 0, 1, NULL);"
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, globalPid,"
       " value, bytes, graphNodeId, memKind);"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (3500, 3600, 0, 1, 7, 17, " << gpid(4242) << ", 0, 1024, NULL, 2);"
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, correlationId,"
       " globalPid, syncType, eventId);"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES"
       " (3700, 3800, 0, 1, 7, 18, " << gpid(4242) << ", 3, NULL),"
       " (3900, 3950, 0, 1, 4294967295, 19, " << gpid(4242) << ", 1, 5);"
    << "CREATE TABLE NVTX_EVENTS (" << kNvtx2020 << ");"
    << "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, endGlobalTid, textId, domainId) VALUES"
       " (100, NULL, 75, 'mydomain', " << gtid(4242, 4243) << ", NULL, NULL, 1),"
       " (500, 4000, 59, 'outer', " << gtid(4242, 4243) << ", NULL, NULL, 0),"
       " (600, 700, 59, NULL, " << gtid(4242, 4243) << ", NULL, 6, 1),"
       " (800, NULL, 59, 'never closed', " << gtid(4242, 4243) << ", NULL, NULL, 0),"
       " (900, 850, 60, 'backwards', " << gtid(4242, 4243) << ", NULL, NULL, 0),"
       " (950, NULL, 34, 'a mark', " << gtid(4242, 4243) << ", NULL, NULL, 0),"
       " (1000, 2000, 60, 'aten::add, op_id = 3', " << gtid(4242, 4243) << ", " << gtid(4242, 4242) << ", NULL, 0),"
       " (5000, NULL, 76, NULL, " << gtid(4242, 4243) << ", NULL, NULL, 1);"
    << "CREATE TABLE TARGET_INFO_GPU (vmId, deviceId, name, busLocation, isDiscrete);"
    << "INSERT INTO TARGET_INFO_GPU VALUES (" << kVm << ", 1, 'Quadro RTX 8000', '0000:2D:00.0', 1),"
       " (" << kVm << ", 0, 'Quadro RTX 8000', '0000:15:00.0', 1);"
    << "CREATE TABLE TARGET_INFO_CUDA_GPU (vmId, name, pciBusId, globalMemoryBandwidth, globalMemorySize,"
       " constantMemorySize, l2CacheSize, numThreadsPerWarp, coreClockRate, numMemcpyEngines, numMultiprocessors,"
       " maxIPC, maxWarpsPerMultiprocessor, maxBlocksPerMultiprocessor, maxRegistersPerBlock, maxSharedMemoryPerBlock,"
       " maxThreadsPerBlock, maxBlockDimX, maxBlockDimY, maxBlockDimZ, maxGridDimX, maxGridDimY, maxGridDimZ,"
       " computeCapabilityMajor, computeCapabilityMinor, deviceId, pid, maxSharedMemoryPerMultiprocessor,"
       " maxRegistersPerMultiprocessor);"
    << "INSERT INTO TARGET_INFO_CUDA_GPU VALUES (" << kVm << ", 'Quadro RTX 8000', '0000:15:00.0', 0, 48601, 0, 0,"
       " 32, 0, 3, 72, 0, 32, 16, 65536, 49152, 1024, 1024, 1024, 64, 2147483647, 65535, 65535, 7, 5, 0, 4242, 65536,"
       " 65536);"
    << "CREATE TABLE ThreadNames (nameId, priority, globalTid);"
    << "INSERT INTO ThreadNames VALUES (7, 10, " << gtid(4242, 4242) << "), (7, 10, " << gtid(4242, 4243) << ");"
    << "CREATE TABLE TARGET_INFO_CUDA_STREAM (streamId, hwId, vmId, processId, contextId, priority, flag);"
    << "INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (7, 0, 1, 4242, 1, 0, 0), (8, 0, 1, 4242, 1, 0, 0),"
       " (9, 0, 1, 9999, 5, 0, 0);"
    << "CREATE TABLE TARGET_INFO_CUDA_NULL_STREAM (streamId, hwId, vmId, processId, deviceId, contextId);"
    << "INSERT INTO TARGET_INFO_CUDA_NULL_STREAM VALUES (7, 0, 1, 4242, 0, 1);"
    // Left behind by `nsys stats`: must be ignored.
    << "CREATE TABLE cudaAPIStats (nameId, num, min, max, avg, total); INSERT INTO cudaAPIStats VALUES (1, 1, 1, 1, 1, 1);";
  return s.str();
}

TEST_F(NsysImport, Schema2020ReadsEveryTableByName) {
  auto path = make_db("2020.sqlite", schema_2020());
  ImportResult r = import(path);
  EXPECT_GT(r.rows, 0);

  EXPECT_EQ(one("SELECT format, format_version, tool_version, clock, vendor, framework, file_bytes > 0 FROM trace"),
            "nsys|NULL|NULL|session|nvidia|pytorch|1");
  EXPECT_EQ(rows("SELECT start_ns, dur_ns, name, device_id, stream_id, pid, correlation_id, grid_x, grid_y, grid_z,"
                 " block_x, block_y, block_z, registers_per_thread, shared_memory_bytes FROM kernel ORDER BY start_ns"),
            (std::vector<std::string>{
                "1000|500|void saxpy(int, float, float *, float *)|0|7|4242|10|4|1|1|256|1|1|32|1536",
                "3000|100|saxpy|0|7|4242|12|2|2|1|64|2|1|16|NULL"}));
  EXPECT_EQ(rows("SELECT start_ns, dur_ns, name, kind, pid, tid, correlation_id FROM api_call ORDER BY start_ns"),
            (std::vector<std::string>{"900|200|cudaLaunchKernel|runtime|4242|4243|10",
                                      "2900|150|cuLaunchKernel|driver|4242|4243|12",
                                      "3200|100|cudaMemcpyAsync|runtime|4242|4243|13",
                                      "4000|10|<string 99>|runtime|4242|4243|14"}));
  EXPECT_EQ(rows("SELECT start_ns, dur_ns, bytes, kind, src_kind, dst_kind, stream_id, correlation_id FROM memcpy"
                 " ORDER BY start_ns"),
            (std::vector<std::string>{"3300|100|4096|htod|pageable|device|7|13", "3400|50|8|ptop|device|device|8|15",
                                      "3450|10|8|unknown|pinned|unknown|8|16"}));
  EXPECT_EQ(rows("SELECT start_ns, dur_ns, bytes, mem_kind, device_id FROM memset"),
            (std::vector<std::string>{"3500|100|1024|device|0"}));
  EXPECT_EQ(rows("SELECT start_ns, dur_ns, kind, stream_id, device_id, pid, correlation_id FROM sync_event ORDER BY start_ns"),
            (std::vector<std::string>{"3700|100|stream_sync|7|0|4242|18", "3900|50|event_sync|NULL|0|4242|19"}));
  EXPECT_EQ(rows("SELECT start_ns, dur_ns, name, kind, domain, pid, tid FROM range ORDER BY start_ns"),
            (std::vector<std::string>{"500|3500|outer|nvtx|NULL|4242|4243",
                                      "600|100|range via id|nvtx|mydomain|4242|4243",
                                      "1000|1000|aten::add, op_id = 3|nvtx|NULL|4242|4243"}));
  EXPECT_EQ(rows("SELECT device_id, name, vendor, compute_major, compute_minor, sm_count, memory_bytes FROM device"
                 " ORDER BY device_id"),
            (std::vector<std::string>{"0|Quadro RTX 8000|nvidia|7|5|72|" + n(int64_t{48601} * 1024 * 1024),
                                      "1|Quadro RTX 8000|nvidia|NULL|NULL|NULL|NULL"}));
  EXPECT_EQ(rows("SELECT pid, tid, name FROM thread ORDER BY tid"),
            (std::vector<std::string>{"4242|4242|python3", "4242|4243|python3"}));
  EXPECT_EQ(rows("SELECT pid, name FROM process"), (std::vector<std::string>{"4242|python3"}));
  EXPECT_EQ(rows("SELECT device_id, stream_id, name FROM stream ORDER BY stream_id"),
            (std::vector<std::string>{"0|7|NULL", "0|8|NULL"}));

  EXPECT_EQ(issue_count("negative_duration"), 2);  // one kernel, one NVTX range
  EXPECT_EQ(issue_count("missing_string_id"), 1);
  EXPECT_EQ(issue_count("unknown_memcpy_kind"), 1);
  EXPECT_EQ(issue_count("unknown_memory_kind"), 1);
  EXPECT_EQ(issue_count("nvtx_range_without_end"), 1);
  EXPECT_EQ(issue_count("nvtx_mark_skipped"), 1);
  EXPECT_EQ(issue_count("stream_without_device"), 1);
  EXPECT_EQ(one("SELECT location FROM import_issue WHERE kind = 'missing_string_id'"),
            "table CUPTI_ACTIVITY_KIND_RUNTIME row 4");
  EXPECT_EQ(r.issues, 8);
  // Kernels, runtime, memcpy, memset, sync and NVTX rows read, kept or not.
  EXPECT_EQ(one("SELECT event_count, start_ns, end_ns FROM trace"), "21|500|4010");
}

std::string schema_2022() {
  std::ostringstream s;
  s << "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
       "INSERT INTO StringIds VALUES (10, 'cudaMalloc'), (11, 'cudaMalloc_v3020'), (12, 'cudaLaunchKernel_v7000'),"
       " (13, 'cudaMemcpy'), (14, 'cudaMemcpy_v3020'), (15, 'cudaFree_v3020'), (16, 'saxpy(int, float, float *)'),"
       " (17, CAST(X'4D5049205261E96B2030' AS TEXT));"
    << "CREATE TABLE EXPORT_META_DATA (name TEXT, value TEXT);"
       "INSERT INTO EXPORT_META_DATA VALUES ('EXPORT_PRODUCT_NAME', 'NVIDIA Nsight Systems'),"
       " ('EXPORT_PRODUCT_VERSION', '2022.2.1.31'), ('EXPORT_SCHEMA_VERSION', '2.9.1'),"
       " ('EXPORT_HOST', 'login-node-secret-host'), ('EXPORT_USER', 'secretuser42');"
    // pipit appended `name TEXT` to RUNTIME and MEMCPY after export.
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,"
       " globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,"
       " callchainId INTEGER, name TEXT);"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES"
       " (100, 500, 67, " << gtid(77, 78) << ", 5, 10, 0, 0, NULL),"
       " (110, 490, 0, " << gtid(77, 78) << ", 5, 11, 0, NULL, NULL),"
       " (600, 700, 0, " << gtid(77, 78) << ", 6, 12, 0, NULL, NULL),"
       " (700, 750, 0, " << gtid(77, 79) << ", 7, 15, 0, NULL, NULL),"
       " (810, 890, 0, " << gtid(77, 79) << ", 8, 14, 0, NULL, NULL),"
       " (800, 900, 67, " << gtid(77, 79) << ", 8, 13, 0, 1, NULL),"
       " (950, 960, 0, " << gtid(77, 79) << ", 0, 15, 0, NULL, NULL),"
       " (970, 980, 0, " << gtid(77, 79) << ", 0, 15, 0, NULL, NULL);"
    // DLProf added kernel_name / long_kernel_name columns (2022.1).
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (" << kKernel2020
    << ", mangledName, sharedMemoryLimitConfig, kernel_name TEXT, long_kernel_name TEXT);"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,"
       " demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory,"
       " dynamicSharedMemory, kernel_name, long_kernel_name) VALUES"
       " (620, 680, 0, 1, 7, 6, " << gpid(77) << ", 16, 16, 24, 8, 1, 1, 128, 1, 1, 0, 0, 'dlprof', 'dlprof long');"
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (" << kMemcpy2020 << ", migrationCause, virtualAddress, name TEXT);"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid,"
       " bytes, copyKind, srcKind, dstKind) VALUES (820, 880, 0, 1, 7, 8, " << gpid(77) << ", 1000, 2, 2, 1);"
    << "CREATE TABLE TARGET_INFO_GPU (" << kGpu2022 << ");"
    << "INSERT INTO TARGET_INFO_GPU (vmId, id, name, totalMemory, smCount, cuDevice, chipName, computeMajor,"
       " computeMinor) VALUES (" << kVm << ", 0, 'NVIDIA A100-SXM4-40GB', 42297524224, 108, 0, 'GA100', 8, 0),"
       " (" << kVm << ", 1, 'NVIDIA A100-SXM4-40GB', 42297524224, 108, 1, 'GA100', 8, 0);"
    << "CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);"
    << "INSERT INTO PROCESSES VALUES (" << gpid(77) << ", 77, './saxpy-mpi-cuda'), (" << gpid(5) << ", 5, 'slurmstepd');"
    << "CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER);"
    << "INSERT INTO ThreadNames VALUES (17, 10, " << gtid(77, 78) << ");"
    << "CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT, name TEXT, nameEnum INTEGER, value TEXT);"
       "INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (1, 'Local (CLI)', 'DeviceEnvironment', 1,"
       " 'PMI_SHARED_SECRET=s3cr3tv4lu3' || char(0) || 'USER=secretuser42'),"
       " (1, 'Local (CLI)', 'Hostname', 2, 'login-node-secret-host');"
    // All 96 tables exist in a 2022.2 export, most empty.
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, globalPid,"
       " value, bytes, graphNodeId, memKind);"
       "CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, correlationId,"
       " globalPid, syncType, eventId);"
       "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, address, pc, bytes, memKind,"
       " memoryOperationType, name, correlationId);"
       "CREATE TABLE TARGET_INFO_NVTX_CUDA_STREAM (name TEXT, hwId, vmId, processId, deviceId, contextId, streamId);";
  return s.str();
}

TEST_F(NsysImport, Schema2022MergesNestedRuntimeDuplicatesAndIgnoresAddedColumns) {
  auto path = make_db("2022.sqlite", schema_2022());
  import(path);
  EXPECT_EQ(one("SELECT format_version, tool_version, framework FROM trace"), "2.9.1|2022.2.1.31|NULL");
  // Eight rows, two nested pairs: six calls; the outer row of each pair is kept, with the
  // suffix-free name, whichever order the pair was stored in. Correlation id 0 pairs nothing.
  EXPECT_EQ(rows("SELECT start_ns, dur_ns, name, kind, pid, tid, correlation_id FROM api_call ORDER BY start_ns"),
            (std::vector<std::string>{"100|400|cudaMalloc|runtime|77|78|5", "600|100|cudaLaunchKernel|runtime|77|78|6",
                                      "700|50|cudaFree|runtime|77|79|7", "800|100|cudaMemcpy|runtime|77|79|8",
                                      "950|10|cudaFree|runtime|77|79|0", "970|10|cudaFree|runtime|77|79|0"}));
  EXPECT_EQ(rows("SELECT name, shared_memory_bytes, device_id FROM kernel"),
            (std::vector<std::string>{"saxpy(int, float, float *)|0|0"}));
  EXPECT_EQ(rows("SELECT kind, src_kind, dst_kind, bytes FROM memcpy"), (std::vector<std::string>{"dtoh|device|pinned|1000"}));
  // Both GPUs of the machine are kept, used or not.
  EXPECT_EQ(rows("SELECT device_id, name, compute_major, compute_minor, sm_count, memory_bytes FROM device ORDER BY 1"),
            (std::vector<std::string>{"0|NVIDIA A100-SXM4-40GB|8|0|108|42297524224",
                                      "1|NVIDIA A100-SXM4-40GB|8|0|108|42297524224"}));
  EXPECT_EQ(rows("SELECT pid, name FROM process ORDER BY pid"),
            (std::vector<std::string>{"5|slurmstepd", "77|./saxpy-mpi-cuda"}));
  // Non-UTF-8 bytes in StringIds are repaired, not copied.
  EXPECT_EQ(one("SELECT name FROM thread"), "MPI Ra\xEF\xBF\xBDk 0");
  EXPECT_EQ(one("SELECT count(*) FROM import_issue"), "0");
  for (const auto& text : all_store_text()) {
    EXPECT_EQ(text.find("s3cr3tv4lu3"), std::string::npos);
    EXPECT_EQ(text.find("PMI_SHARED_SECRET"), std::string::npos);
    EXPECT_EQ(text.find("secretuser42"), std::string::npos);
    EXPECT_EQ(text.find("login-node-secret-host"), std::string::npos);
  }
}

std::string schema_2026(bool with_enums) {
  std::ostringstream s;
  s << "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
       "INSERT INTO StringIds VALUES (100, 'cudaLaunchKernelExC_v11060'), (200, 'cudaMemcpyAsync_v3020'),"
       " (300, 'sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64'),"
       " (301, 'sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x256x8_stage3_ffma'),"
       " (302, 'void at::native::vectorized_elementwise_kernel<4>'), (331886, 'python3');"
    << "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
       "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2026.2.1.210'),"
       " ('EXPORT_SCHEMA_VERSION', '3.25.0'), ('EXPORT_USER', 'rich-secret-user');"
    << "CREATE TABLE META_DATA_CAPTURE (name TEXT, value TEXT);"
       "INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:ENVIRONMENT_VARIABLE', 'PMI_SHARED_SECRET=hunter2hunter2'),"
       " ('PROCESS_0:ENVIRONMENT_VARIABLE', 'HOSTNAME=gpu-node-secret-17');"
    << "CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT, name TEXT, nameEnum INTEGER,"
       " value TEXT); INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (1, 'Local (CLI)', 'GpuInfo', 3, '{}');"
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, greenContextId, streamId,"
       " correlationId, globalPid, demangledName, shortName, mangledName, launchType, cacheConfig, registersPerThread,"
       " gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread,"
       " localMemoryTotal, gridId, sharedMemoryExecuted, graphNodeId, sharedMemoryLimitConfig, qmdBulkReleaseDone,"
       " qmdPreexitDone, qmdLastCtaDone, graphId, clusterX, clusterY, clusterZ, clusterSchedulingPolicy,"
       " maxPotentialClusterSize, maxActiveClusters, sharedMemoryRequestedPercentage, tensorSizeMinusOneElements TEXT);"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,"
       " demangledName, shortName, tensorSizeMinusOneElements) VALUES"
       " (10, 20, 0, 1, 7, 1, " << gpid(111) << ", 300, 300, '[1,2]'),"
       " (30, 40, 0, 1, 7, 2, " << gpid(111) << ", 302, 302, NULL),"
       " (50, 60, 1, 2, 15, 1, " << gpid(112) << ", 301, 301, NULL),"
       " (70, 80, 1, 2, 15, 2, " << gpid(112) << ", 302, 302, NULL);"
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId,"
       " returnValue, callchainId);"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (5, 9, 0, " << gtid(111, 111) << ", 1, 100, 0, NULL),"
       " (45, 48, 0, " << gtid(112, 112) << ", 1, 200, 0, NULL);"
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, greenContextId, streamId,"
       " correlationId, globalPid, bytes, copyKind, deprecatedSrcId, srcKind, dstKind, srcDeviceId, srcContextId,"
       " dstDeviceId, dstContextId, migrationCause, graphNodeId, virtualAddress, copyCount);"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid,"
       " bytes, copyKind, srcKind, dstKind) VALUES (46, 49, 1, 2, 15, 3, " << gpid(112) << ", 64, 1, 1, 2);"
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, greenContextId, streamId,"
       " correlationId, globalPid, deprecatedSyncType, syncType, eventId, eventSyncId);"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, correlationId,"
       " globalPid, deprecatedSyncType, syncType) VALUES (81, 90, 1, 2, 15, 4, " << gpid(112) << ", 7, 2);"
    << "CREATE TABLE NVTX_EVENTS (" << kNvtx2020 << ", binaryData TEXT);"
    << "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES"
       " (1, 100, 59, 'aten::mm, op_id = 9', " << gtid(111, 111) << ", 0);"
    << "CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);"
    << "INSERT INTO PROCESSES VALUES (" << gpid(111) << ", 111, 'python3'), (" << gpid(112) << ", 112, 'python3');"
    << "CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER);"
    << "INSERT INTO ThreadNames VALUES (331886, 10, " << gtid(111, 111) << ");"
    << "CREATE TABLE TARGET_INFO_CUDA_STREAM (streamId, hwId, vmId, processId, contextId, priority, flag);"
    << "INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (7, 0, 1, 111, 1, 0, 2), (20, 0, 1, 111, 1, 0, 2),"
       " (15, 0, 1, 112, 2, 0, 2);";
  if (with_enums) {
    s << "CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER, name TEXT, label TEXT);"
         "INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (0, 'CUDA_MEMCPY_KIND_UNKNOWN', 'Unknown'),"
         " (1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device'), (2, 'CUDA_MEMCPY_KIND_DTOH', 'Device-to-Host');"
         "CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER, name TEXT, label TEXT);"
         "INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', 'Pageable'),"
         " (1, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', 'Pinned'), (2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device');"
         "CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER, name TEXT, label TEXT);"
         "INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES (0, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN', 'Unknown'),"
         " (2, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT', 'Stream wait sync');";
  }
  return s.str();
}

TEST_F(NsysImport, Schema2026WithoutGpuTableInfersDevicesFromActivity) {
  auto path = make_db("2026.sqlite", schema_2026(true));
  import(path);
  EXPECT_EQ(one("SELECT format_version, tool_version, framework, vendor FROM trace"), "3.25.0|2026.2.1.210|pytorch|nvidia");
  // No GPU table: one row per device seen, no name; only the arch-specific sm90 kernel fixes a
  // compute capability (sm80 kernels also run on Hopper, so device 1 stays unknown).
  EXPECT_EQ(rows("SELECT device_id, name, vendor, compute_major, compute_minor, sm_count FROM device ORDER BY 1"),
            (std::vector<std::string>{"0|NULL|nvidia|9|0|NULL", "1|NULL|nvidia|NULL|NULL|NULL"}));
  EXPECT_EQ(issue_count("device_inferred_from_kernel_names"), 2);
  EXPECT_EQ(one("SELECT example FROM import_issue WHERE kind = 'device_inferred_from_kernel_names'"),
            "device 0: no GPU table in the export; compute capability 9.0 from arch-specific kernel names");
  EXPECT_EQ(rows("SELECT name, kind, pid FROM api_call ORDER BY start_ns"),
            (std::vector<std::string>{"cudaLaunchKernelExC|runtime|111", "cudaMemcpyAsync|runtime|112"}));
  EXPECT_EQ(rows("SELECT kind, src_kind, dst_kind, device_id FROM memcpy"), (std::vector<std::string>{"htod|pinned|device|1"}));
  EXPECT_EQ(rows("SELECT kind, device_id, stream_id FROM sync_event"), (std::vector<std::string>{"stream_wait_event|1|15"}));
  // TARGET_INFO_CUDA_STREAM has no device: (pid, context) -> device comes from the kernels.
  EXPECT_EQ(rows("SELECT device_id, stream_id FROM stream ORDER BY 1, 2"), (std::vector<std::string>{"0|7", "0|20", "1|15"}));
  EXPECT_EQ(one("SELECT name FROM thread"), "python3");  // sparse StringIds ids
  EXPECT_EQ(one("SELECT count(*) FROM kernel"), "4");
  for (const auto& text : all_store_text()) {
    for (const char* secret : {"hunter2hunter2", "PMI_SHARED_SECRET", "gpu-node-secret-17", "rich-secret-user"})
      EXPECT_EQ(text.find(secret), std::string::npos) << "environment data leaked into the store";
  }
}

// Issue 20, defect 6: end = INT64_MAX, start = INT64_MIN and byte / shared-memory counts at the
// int64 extremes passed the importer and overflowed `end - start`, the shared-memory sum and later
// SQLite sums ("integer overflow"). They are now dropped with an import issue, as Kineto does.
TEST_F(NsysImport, ExtremeValuesAreDroppedWithAnIssueNotOverflowed) {
  const std::string max = n(INT64_MAX), min = n(INT64_MIN);
  std::ostringstream s;
  s << "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT); INSERT INTO StringIds VALUES (3, 'k');"
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (" << kKernel2020 << ");"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, globalPid, demangledName,"
       " staticSharedMemory, dynamicSharedMemory) VALUES"
       " (0, " << max << ", 0, 7, " << gpid(1) << ", 3, 0, 0),"         // end at INT64_MAX: dropped
       " (" << min << ", 100, 0, 7, " << gpid(1) << ", 3, 0, 0),"       // start at INT64_MIN: dropped
       " (" << min << ", " << max << ", 0, 7, " << gpid(1) << ", 3, 0, 0),"
       " (200, 300, 0, 7, " << gpid(1) << ", 3, " << max << ", 1),"     // kept, shared memory unknown
       " (400, 500, 0, 7, " << gpid(1) << ", 3, 1024, 512);"            // the one ordinary kernel
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (" << kMemcpy2020 << ");"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, streamId, globalPid, bytes, copyKind) VALUES"
       " (600, 700, 0, 7, " << gpid(1) << ", " << min << ", 1), (800, 900, 0, 7, " << gpid(1) << ", 4096, 1);"
    << "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, bytes, memoryOperationType);"
    << "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (100, " << gpid(1) << ", 0, " << max << ", 0),"
       " (200, " << gpid(1) << ", 0, 64, 0), (" << max << ", " << gpid(1) << ", 0, 64, 1);"
    // globalMemorySize is MiB: INT64_MAX of them once overflowed the conversion to bytes.
    << "CREATE TABLE TARGET_INFO_CUDA_GPU (deviceId, name, computeCapabilityMajor, computeCapabilityMinor,"
       " numMultiprocessors, globalMemorySize, pid);"
    << "INSERT INTO TARGET_INFO_CUDA_GPU VALUES (0, 'G', 8, 0, 108, " << max << ", 1),"
       " (1, 'G', 8, 0, 108, 81920, 1);";
  auto path = make_db("extremes.sqlite", s.str());
  import(path);
  EXPECT_EQ(rows("SELECT start_ns, dur_ns, shared_memory_bytes FROM kernel ORDER BY start_ns"),
            (std::vector<std::string>{"200|100|NULL", "400|100|1536"}));
  EXPECT_EQ(issue_count("timestamp_out_of_range"), 4);  // three kernels, one memory event
  EXPECT_EQ(issue_count("value_out_of_range"), 4);  // staticSharedMemory, memcpy bytes, allocation bytes, memory size
  EXPECT_EQ(rows("SELECT device_id, memory_bytes FROM device ORDER BY device_id"),
            (std::vector<std::string>{"0|NULL", "1|85899345920"}));  // 81920 MiB
  EXPECT_EQ(rows("SELECT bytes FROM memcpy ORDER BY start_ns"), (std::vector<std::string>{"NULL", "4096"}));
  EXPECT_EQ(rows("SELECT ts_ns, allocated_bytes FROM memory_sample"), (std::vector<std::string>{"200|64"}));
  // What used to fail with SQLite's bare "integer overflow".
  EXPECT_EQ(one("SELECT sum(dur_ns) FROM kernel"), "200");
}

// The importer sizes its text table from the NVTX table's largest rowid (one b-tree descent, no
// count). A rowid of 2^62 on a file of a few pages must not ask for a table that large: the hint
// is bounded by the file's size, and the ranges load as in any export.
TEST_F(NsysImport, HugeNvtxRowidDoesNotSizeTheTextTable) {
  std::ostringstream s;
  s << "CREATE TABLE NVTX_EVENTS (" << kNvtx2020 << ");"
    << "INSERT INTO NVTX_EVENTS (rowid, start, end, eventType, text, globalTid) VALUES"
       " (1, 100, 200, 59, 'first', " << gtid(4242, 4243) << "),"
       " (4611686018427387904, 300, 450, 59, 'far', " << gtid(4242, 4243) << ");";
  auto path = make_db("huge_rowid.sqlite", s.str());
  import(path);
  EXPECT_EQ(rows("SELECT start_ns, dur_ns, name FROM range ORDER BY start_ns"),
            (std::vector<std::string>{"100|100|first", "300|150|far"}));
}

TEST_F(NsysImport, CuptiNumberingWhenEnumTablesAreAbsent) {
  auto path = make_db("2026_no_enums.sqlite", schema_2026(false));
  import(path);
  EXPECT_EQ(rows("SELECT kind, src_kind, dst_kind FROM memcpy"), (std::vector<std::string>{"htod|pinned|device"}));
  EXPECT_EQ(rows("SELECT kind FROM sync_event"), (std::vector<std::string>{"stream_wait_event"}));
}

TEST_F(NsysImport, EnumTableOfTheFileWinsOverCuptiDefaults) {
  // A renumbered enum (as a future nsys might write): the file's own table decides.
  auto path = make_db("renumbered.sqlite",
                      "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
                      "CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER, name TEXT, label TEXT);"
                      "INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (1, 'CUDA_MEMCPY_KIND_DTOD', ''), (2, 'CUDA_MEMCPY_KIND_PTOP', '');"
                      "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, streamId, copyKind, srcKind, dstKind);"
                      "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (1, 2, 0, 7, 1, 2, 2), (3, 4, 0, 7, 2, 2, 2), (5, 6, 0, 7, 9, 0, 0);");
  import(path);
  EXPECT_EQ(rows("SELECT kind, src_kind FROM memcpy ORDER BY start_ns"),
            (std::vector<std::string>{"dtod|device", "ptop|device", "htoh|pageable"}));
}

TEST_F(NsysImport, GpuMemoryUsageAndGpuMetrics) {
  std::ostringstream s;
  s << "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
    << "CREATE TABLE TARGET_INFO_GPU (" << kGpu2022 << ");"
    << "INSERT INTO TARGET_INFO_GPU (vmId, id, name, cuDevice) VALUES (" << kVm << ", 0, 'NVIDIA H100 80GB HBM3', 0),"
       " (" << kVm << ", 1, 'NVIDIA H100 80GB HBM3', 1);"
    << "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid INTEGER NOT NULL, deviceId INTEGER"
       " NOT NULL, contextId INTEGER NOT NULL, address INTEGER NOT NULL, pc INTEGER NOT NULL, bytes INTEGER NOT NULL,"
       " memKind INTEGER NOT NULL, memoryOperationType INTEGER NOT NULL, name TEXT, correlationId INTEGER);"
    // Stored out of time order on purpose.
    << "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (300, " << gpid(9) << ", 0, 1, 4096, 0, 100, 2, 1, NULL, 3),"
       " (100, " << gpid(9) << ", 0, 1, 4096, 0, 100, 2, 0, NULL, 1),"
       " (200, " << gpid(9) << ", 0, 1, 8192, 0, 50, 2, 0, NULL, 2),"
       " (150, " << gpid(9) << ", 1, 2, 4096, 0, 7, 2, 0, NULL, 4),"
       " (400, " << gpid(9) << ", 1, 2, 4096, 0, 7, 2, 5, NULL, 5);"
    << "CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER, sourceId INTEGER, typeName TEXT, metricId INTEGER,"
       " metricName TEXT);"
       "INSERT INTO TARGET_INFO_GPU_METRICS VALUES (65536, 0, 'GH100', 1, 'SMs Active [Throughput %]'),"
       " (65537, 0, 'GH100', 1, 'SMs Active [Throughput %]'), (65536, 0, 'GH100', 2, 'DRAM Read Bandwidth [Throughput %]');"
    << "CREATE TABLE GPU_METRICS (timestamp INTEGER, typeId INTEGER, metricId INTEGER, value INTEGER);"
       "INSERT INTO GPU_METRICS VALUES (1000, 65536, 1, 42), (1000, 65537, 1, 7), (2000, 65536, 2, 13), (3000, 65536, 77, 1);";
  auto path = make_db("metrics.sqlite", s.str());
  import(path);
  EXPECT_EQ(rows("SELECT device_id, ts_ns, allocated_bytes, delta_bytes, reserved_bytes FROM memory_sample"
                 " ORDER BY device_id, ts_ns"),
            (std::vector<std::string>{"0|100|100|100|NULL", "0|200|150|50|NULL", "0|300|50|-100|NULL", "1|150|7|7|NULL"}));
  EXPECT_EQ(issue_count("unknown_memory_operation"), 1);
  // Stored once (issue 17): as sample series only, nothing in _counter; the counter view still
  // shows them, under the series' names.
  EXPECT_EQ(one("SELECT count(*) FROM _counter"), "0");
  EXPECT_EQ(rows("SELECT device_id, ts_ns, name, value FROM counter ORDER BY ts_ns, device_id"),
            (std::vector<std::string>{"0|1000|sm_active|42.0", "1|1000|sm_active|7.0", "0|2000|dram_read|13.0",
                                      "0|3000|metric 77|1.0"}));
  EXPECT_EQ(issue_count("gpu_metric_without_name"), 1);
  // The sample series under canonical names (docs/samples.md, "nsys GPU metrics"); a metric without
  // a name keeps the importer's "metric N".
  EXPECT_EQ(rows("SELECT device_id, metric, unit, ts_ns, value, format FROM sample ORDER BY ts_ns, device_id"),
            (std::vector<std::string>{"0|sm_active|%|1000|42.0|nsys-gpu-metrics", "1|sm_active|%|1000|7.0|nsys-gpu-metrics",
                                      "0|dram_read|%|2000|13.0|nsys-gpu-metrics", "0|metric 77||3000|1.0|nsys-gpu-metrics"}));
}

TEST_F(NsysImport, SniffsSqliteButNotProflintStores) {
  NsysImporter nsys;
  std::string header("SQLite format 3\0", 16);
  header.resize(100, '\0');
  EXPECT_TRUE(nsys.sniff(header, false));
  std::string store_header = header;
  store_header.replace(68, 4, "PFLT");
  EXPECT_FALSE(nsys.sniff(store_header, false));
  EXPECT_FALSE(nsys.sniff("{\"traceEvents\": []}", false));
  EXPECT_FALSE(nsys.sniff("SQLite format 2", false));
  EXPECT_FALSE(nsys.sniff("", false));
  // A real saved store is not claimed either.
  auto store_path = (dir_ / "saved.pfdb").string();
  Store::create_file(store_path);
  std::ifstream in(store_path, std::ios::binary);
  std::string head(100, '\0');
  in.read(head.data(), 100);
  EXPECT_FALSE(nsys.sniff(head, false));
}

TEST_F(NsysImport, SqliteWithoutNsysTablesIsAClearError) {
  auto path = make_db("users.sqlite", "CREATE TABLE users (name TEXT); INSERT INTO users VALUES ('x');");
  try {
    import(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ": SQLite file is not an Nsight Systems export (no StringIds/CUPTI_ACTIVITY_KIND_* tables)");
  }
  // The registry routes it here too (kineto does not claim SQLite).
  EXPECT_THROW(import_file(path, store_, ImportOptions{}), Error);
}

TEST_F(NsysImport, GzippedExportAsksToDecompressFirst) {
  auto plain = make_db("2020.sqlite", schema_2020());
  std::ifstream in(plain, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto path = (dir_ / "2020.sqlite.gz").string();
  gzFile gz = gzopen(path.c_str(), "wb");
  gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(gz);
  try {
    import_file(path, store_, ImportOptions{});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ": gzip-compressed SQLite file", 0), 0u) << e.what();
  }
}

TEST_F(NsysImport, GarbageAfterTheHeaderIsAnErrorNotACrash) {
  std::string bytes("SQLite format 3\0", 16);
  for (int i = 0; i < 8192; ++i) bytes += static_cast<char>((i * 131 + 7) & 0xFF);
  auto path = (dir_ / "garbage.sqlite").string();
  std::ofstream(path, std::ios::binary) << bytes;
  try {
    import(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
  }
}

TEST_F(NsysImport, TruncatedExportIsAnErrorOrAPartialImportNeverACrash) {
  // Enough rows that the tables span many pages, then cut the file at several places.
  std::ostringstream s;
  s << schema_2020() << "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20000)"
    << " INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, globalPid, demangledName)"
    << " SELECT i * 10, i * 10 + 5, 0, 7, " << gpid(4242) << ", 3 FROM c;";
  auto full = make_db("full.sqlite", s.str());
  std::ifstream in(full, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 100000u);
  for (size_t cut : {bytes.size() / 10, bytes.size() / 3, bytes.size() / 2, bytes.size() - 4096}) {
    auto path = (dir_ / ("cut_" + std::to_string(cut) + ".sqlite")).string();
    std::ofstream(path, std::ios::binary) << bytes.substr(0, cut);
    Store store = Store::create_in_memory();
    try {
      ImportResult r = import_into(NsysImporter(), path, store, ImportOptions{});
      EXPECT_GT(r.issues, 0) << "cut at " << cut << ": a partial import must say so";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
    }
  }
}

TEST_F(NsysImport, CorruptPageInsideATableKeepsTheRowsBeforeItAndCountsTheTable) {
  std::ostringstream s;
  s << schema_2020() << "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20000)"
    << " INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, globalPid, demangledName)"
    << " SELECT 10000 + i * 10, 10000 + i * 10 + 5, 0, 7, " << gpid(4242) << ", 3 FROM c;";
  auto path = make_db("corrupt.sqlite", s.str());
  {
    // The kernel rows were written last, so the page at 3/4 of the file is one of their leaves.
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    auto size = static_cast<int64_t>(f.tellg());
    int64_t page = 4096;
    f.seekp((size * 3 / 4) / page * page);
    std::string junk(static_cast<size_t>(page), '\xFF');
    f.write(junk.data(), page);
  }
  ImportResult r = import(path);
  int64_t kernels = std::stoll(one("SELECT count(*) FROM kernel"));
  EXPECT_GT(kernels, 2);
  EXPECT_LT(kernels, 20002);
  EXPECT_EQ(issue_count("table_unreadable"), 1);
  EXPECT_EQ(one("SELECT substr(location, 1, 33) FROM import_issue WHERE kind = 'table_unreadable'"),
            "table CUPTI_ACTIVITY_KIND_KERNEL ");
  // The tables after the broken one are still read.
  EXPECT_EQ(one("SELECT count(*) FROM api_call"), "4");
  EXPECT_EQ(one("SELECT count(*) FROM range"), "3");
  EXPECT_GT(r.issues, 0);
}

TEST_F(NsysImport, LeavesTheExportAndItsFolderUntouched) {
  auto path = make_db("2022.sqlite", schema_2022());
  auto read_all = [&] {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  std::string before = read_all();
  auto mtime = fs::last_write_time(path);
  // Read-only, as exports in shared folders often are.
  fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  import(path);
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(read_all(), before);
  EXPECT_EQ(fs::last_write_time(path), mtime);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"2022.sqlite"});  // no -journal, -wal or -shm left behind
}

}  // namespace

// Issue 16: two processes of one export that each call their own GPU "device 0"
// (CUDA_VISIBLE_DEVICES per process). The export says which physical GPU each process's id is;
// the store must keep the two GPUs apart instead of merging their work into one device 0.
namespace {
std::string two_processes_on_device_0(const std::string& gpu_tables) {
  std::ostringstream s;
  s << "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
       "INSERT INTO StringIds VALUES (1, 'gemm_kernel'), (2, 'python3');"
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,"
       " demangledName, shortName);"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
       " (1000, 2000, 0, 1, 7, 10, " << gpid(111) << ", 1, 1),"
       " (3000, 4000, 0, 1, 7, 11, " << gpid(111) << ", 1, 1),"
       " (1500, 2500, 0, 2, 7, 10, " << gpid(112) << ", 1, 1);"
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid,"
       " bytes, copyKind, srcKind, dstKind);"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (5000, 6000, 0, 2, 7, 12, " << gpid(112) << ", 4096, 1, 1, 2);"
    << "CREATE TABLE PROCESSES (globalPid, pid, name);"
    << "INSERT INTO PROCESSES VALUES (" << gpid(111) << ", 111, 'python3'), (" << gpid(112) << ", 112, 'python3');"
    << gpu_tables;
  return s.str();
}
}  // namespace

TEST_F(NsysImport, ProcessesCallingDifferentGpusDevice0AreMappedToThePhysicalGpus) {
  std::ostringstream gpus;
  gpus << "CREATE TABLE TARGET_INFO_GPU (" << kGpu2022 << ");"
       << "INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, uuid, cuDevice, smCount, computeMajor, computeMinor)"
          " VALUES (" << kVm << ", 0, 'NVIDIA H100', '0000:18:00.0', 'GPU-aaaa', 0, 132, 9, 0),"
          " (" << kVm << ", 1, 'NVIDIA H100', '0000:2a:00.0', 'GPU-bbbb', 1, 132, 9, 0);"
       // nsys 2026.1: one row per (GPU, process); both processes call their GPU CUDA device 0.
       << "CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, pid, uuid, numMultiprocessors);"
       << "INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 111, 'GPU-aaaa', 132), (1, 0, 112, 'GPU-bbbb', 132);";
  import(make_db("per_process.sqlite", two_processes_on_device_0(gpus.str())));
  EXPECT_EQ(rows("SELECT device_id, name, sm_count FROM device ORDER BY 1"),
            (std::vector<std::string>{"0|NVIDIA H100|132", "1|NVIDIA H100|132"}));
  EXPECT_EQ(rows("SELECT pid, device_id, count(*) FROM kernel GROUP BY 1, 2 ORDER BY 1"),
            (std::vector<std::string>{"111|0|2", "112|1|1"}));
  EXPECT_EQ(rows("SELECT pid, device_id FROM memcpy"), (std::vector<std::string>{"112|1"}));
  // Mapped, nothing lost: no import issue (the two GPUs are simply two devices).
  EXPECT_EQ(one("SELECT count(*) FROM import_issue"), "0");
}

// nsys 2020.3 GPU tables: two GPUs by bus location, and each process's device 0 with the bus id
// the process's CUDA reported for it.
static std::string gpu_tables_2020(const std::string& bus_of_111, const std::string& bus_of_112) {
  std::ostringstream gpus;
  gpus << "CREATE TABLE TARGET_INFO_GPU (vmId, deviceId, name, busLocation, isDiscrete);"
       << "INSERT INTO TARGET_INFO_GPU VALUES (" << kVm << ", 0, 'Quadro RTX 8000', '0000:15:00.0', 1),"
          " (" << kVm << ", 1, 'Quadro RTX 8000', '0000:2D:00.0', 1);"
       << "CREATE TABLE TARGET_INFO_CUDA_GPU (vmId, name, pciBusId, numMultiprocessors, computeCapabilityMajor,"
          " computeCapabilityMinor, deviceId, pid);"
       << "INSERT INTO TARGET_INFO_CUDA_GPU VALUES (" << kVm << ", 'Quadro RTX 8000', '" << bus_of_111
       << "', 72, 7, 5, 0, 111), (" << kVm << ", 'Quadro RTX 8000', '" << bus_of_112 << "', 72, 7, 5, 0, 112);";
  return gpus.str();
}

TEST_F(NsysImport, Schema2020MapsProcessDevicesByPciBusId) {
  import(make_db("per_process_2020.sqlite", two_processes_on_device_0(gpu_tables_2020("0000:15:00.0", "0000:2D:00.0"))));
  EXPECT_EQ(rows("SELECT device_id, compute_major, sm_count FROM device ORDER BY 1"),
            (std::vector<std::string>{"0|7|72", "1|7|72"}));
  EXPECT_EQ(rows("SELECT pid, device_id, count(*) FROM kernel GROUP BY 1, 2 ORDER BY 1"),
            (std::vector<std::string>{"111|0|2", "112|1|1"}));
  EXPECT_EQ(issue_count("device_shared_by_processes"), 0);
}

// One process started with CUDA_VISIBLE_DEVICES=1 on a 2-GPU machine: its rows say device 0, the
// export says its device 0 is GPU 1 (TARGET_INFO_CUDA_DEVICE as nsys 2026.1 writes it, uuid empty
// as in nsys2026_small). Every table that names the GPU must land on GPU 1 (store id 1): kernels,
// copies, memory usage, NVTX-named streams and GPU metrics (whose typeId low byte is the nsys GPU
// id); GPU 0 stays listed and unused. Before, GPU 1 took the id 0 and the metrics of GPU 0 went to it.
TEST_F(NsysImport, OneProcessSeeingOneGpuAsDevice0KeepsThatGpusIdentityInEveryTable) {
  std::ostringstream s;
  s << "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
       "INSERT INTO StringIds VALUES (1, 'gemm_kernel');"
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,"
       " demangledName, shortName);"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 0, 1, 7, 10, " << gpid(111) << ", 1, 1);"
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid,"
       " bytes, copyKind, srcKind, dstKind);"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (2500, 2600, 0, 1, 7, 11, " << gpid(111) << ", 64, 1, 1, 2);"
    << "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, bytes, memoryOperationType);"
    << "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (900, " << gpid(111) << ", 0, 4096, 0);"
    << "CREATE TABLE TARGET_INFO_NVTX_CUDA_STREAM (name, hwId, vmId, processId, deviceId, contextId, streamId);"
    << "INSERT INTO TARGET_INFO_NVTX_CUDA_STREAM VALUES ('loader', 0, 1, 111, 0, 1, 9);"
    << "CREATE TABLE TARGET_INFO_GPU (" << kGpu2022 << ");"
    << "INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, uuid, cuDevice, smCount) VALUES"
       " (" << kVm << ", 0, 'GPU zero', '0000:18:00.0', 'aaaa-0000', 0, 100),"
       " (" << kVm << ", 1, 'GPU one', '0000:2a:00.0', 'bbbb-1111', 1, 132);"
    << "CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, pid, uuid, numMultiprocessors);"
    << "INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (1, 0, 111, '', 132);"
    << "CREATE TABLE TARGET_INFO_GPU_METRICS (typeId, sourceId, typeName, metricId, metricName);"
       "INSERT INTO TARGET_INFO_GPU_METRICS VALUES (65536, 0, 'GH100', 1, 'SMs Active [Throughput %]'),"
       " (65537, 0, 'GH100', 1, 'SMs Active [Throughput %]');"
    << "CREATE TABLE GPU_METRICS (timestamp, typeId, metricId, value);"
       "INSERT INTO GPU_METRICS VALUES (1000, 65536, 1, 3), (1000, 65537, 1, 88);";
  import(make_db("cvd1.sqlite", s.str()));
  EXPECT_EQ(rows("SELECT device_id, name, sm_count FROM device ORDER BY 1"),
            (std::vector<std::string>{"0|GPU zero|100", "1|GPU one|132"}));
  EXPECT_EQ(one("SELECT group_concat(DISTINCT device_id) FROM kernel"), "1");
  EXPECT_EQ(one("SELECT group_concat(DISTINCT device_id) FROM memcpy"), "1");
  EXPECT_EQ(rows("SELECT device_id, allocated_bytes FROM memory_sample"), (std::vector<std::string>{"1|4096"}));
  EXPECT_EQ(rows("SELECT device_id, stream_id, name FROM stream WHERE name IS NOT NULL"),
            (std::vector<std::string>{"1|9|loader"}));
  // 88 % is GPU 1's (typeId 65537): the busy GPU is the one that ran the kernel.
  EXPECT_EQ(rows("SELECT device_id, value FROM sample ORDER BY device_id"), (std::vector<std::string>{"0|3.0", "1|88.0"}));
  EXPECT_EQ(one("SELECT count(*) FROM import_issue"), "0");
}

// Without a gpuId the process's GPU is found by its uuid, whatever its spelling: nvidia-smi's
// 'GPU-' prefix and upper case in TARGET_INFO_CUDA_DEVICE, bare lower case in TARGET_INFO_GPU.
TEST_F(NsysImport, ProcessDevicesAreMatchedByUuidWhenGpuIdIsMissing) {
  std::ostringstream gpus;
  gpus << "CREATE TABLE TARGET_INFO_GPU (" << kGpu2022 << ");"
       << "INSERT INTO TARGET_INFO_GPU (vmId, id, name, uuid, cuDevice, smCount) VALUES"
          " (" << kVm << ", 0, 'NVIDIA H100', '3c3a3338-1eda-4229', 0, 132),"
          " (" << kVm << ", 1, 'NVIDIA H100', '72de0769-ee40-a9a1', 1, 132);"
       << "CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, pid, uuid, numMultiprocessors);"
       << "INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (NULL, 0, 111, 'GPU-3C3A3338-1EDA-4229', 132),"
          " (NULL, 0, 112, 'GPU-72DE0769-EE40-A9A1', 132);";
  import(make_db("by_uuid.sqlite", two_processes_on_device_0(gpus.str())));
  EXPECT_EQ(rows("SELECT pid, device_id, count(*) FROM kernel GROUP BY 1, 2 ORDER BY 1"),
            (std::vector<std::string>{"111|0|2", "112|1|1"}));
  EXPECT_EQ(rows("SELECT pid, device_id FROM memcpy"), (std::vector<std::string>{"112|1"}));
  EXPECT_EQ(issue_count("device_shared_by_processes"), 0);
}

// nsys 2020.3: bus ids spelled differently in the two tables (8-digit domain, lower case) still
// name one GPU; '<UNKNOWN_BUS_ID>' (nsys2020_cudf) names none and leaves the ids as recorded.
TEST_F(NsysImport, Schema2020BusIdsAreComparedAsBusIdsNotText) {
  import(make_db("bus_2020.sqlite",
                 two_processes_on_device_0(gpu_tables_2020("00000000:15:00.0", "00000000:2d:00.0"))));
  EXPECT_EQ(rows("SELECT pid, device_id, count(*) FROM kernel GROUP BY 1, 2 ORDER BY 1"),
            (std::vector<std::string>{"111|0|2", "112|1|1"}));

  Store other = Store::create_in_memory();
  import_into(NsysImporter(),
              make_db("unknown_bus.sqlite",
                      two_processes_on_device_0(gpu_tables_2020("<UNKNOWN_BUS_ID>", "<UNKNOWN_BUS_ID>"))),
              other, ImportOptions{});
  SQLite::Statement q(other.db(), "SELECT group_concat(DISTINCT device_id) FROM kernel");
  ASSERT_TRUE(q.executeStep());
  EXPECT_EQ(q.getColumn(0).getString(), "0");
}

// Without a per-process GPU identity two processes on device 0 may share one GPU: they stay one
// device, and an import issue says so rather than staying silent.
TEST_F(NsysImport, ProcessesSharingADeviceIdWithoutGpuIdentityAreNamedInAnIssue) {
  import(make_db("shared.sqlite", two_processes_on_device_0("")));
  EXPECT_EQ(rows("SELECT pid, device_id, count(*) FROM kernel GROUP BY 1, 2 ORDER BY 1"),
            (std::vector<std::string>{"111|0|2", "112|0|1"}));
  EXPECT_EQ(issue_count("device_shared_by_processes"), 1);
  EXPECT_NE(one("SELECT example FROM import_issue WHERE kind = 'device_shared_by_processes'").find("processes 111, 112"),
            std::string::npos);
}

}  // namespace proflint

namespace proflint {
namespace {

// ---- Host activity: OSRT_API, COMPOSITE_EVENTS, SAMPLING_CALLCHAINS (schema/0007_host_activity.sql) ----

const char* kOsrt2020 = "start, end, eventClass, globalTid, correlationId, nameId, returnValue, nestingLevel, callchainId";
const char* kOsrt2024 = "start, end, eventClass, globalTid, nameId, returnValue, nestingLevel, callchainId";
const char* kComposite = "id, start, cpu, threadState, globalTid, cpuCycles";
const char* kCallchains =
    "id, symbol, module, kernelMode, thumbCode, unresolved, specialEntry, originalIP, unwindMethod, stackDepth";

// One kernel (window 1000..1500) and one runtime call, plus the host tables given.
std::string host_export(const std::string& host_sql) {
  std::ostringstream s;
  s << "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
       "INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'k'), (3, 'read'), (4, 'poll'),"
       " (5, 'ioctl'), (6, 'OS runtime libraries profiling started'), (7, 'nanosleep'), (8, 'pthread_cond_wait'),"
       " (9, 'ImagingResample'), (10, '/usr/lib/_imaging.so'), (11, '_PyEval_EvalFrameDefault'),"
       " (12, 'libpython3.11.so'), (13, 'mmap64');"
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (" << kKernel2020 << ");"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid, demangledName,"
       " shortName) VALUES (1000, 1500, 0, 7, 10, " << gpid(42) << ", 2, 2);"
    << "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue);"
    << "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (900, 1100, 0, " << gtid(42, 43) << ", 10, 1, 0);" << host_sql;
  return s.str();
}

TEST_F(NsysImport, OsRuntimeCalls2020WithCorrelationIdMarkersSkippedWindowKept) {
  std::ostringstream s;
  s << "CREATE TABLE OSRT_API (" << kOsrt2020 << ");"
    << "INSERT INTO OSRT_API VALUES (10, 10, 31, " << gtid(42, 42) << ", 0, 6, 0, NULL, 0),"  // marker: not a call
    << " (200, 700, 27, " << gtid(42, 43) << ", 0, 3, 4096, 0, 0),"
    << " (950, 1050, 27, " << gtid(42, 43) << ", 0, 5, 0, 0, 0),"
    << " (100, 90000, 27, " << gtid(42, 44) << ", 0, 8, 0, 0, 0),"  // reaches past the GPU window
    << " (1600, 1700, 27, " << gtid(42, 43) << ", 0, 13, 0, 1, 0),"
    << " (1800, 1900, 27, " << gtid(42, 43) << ", 0, 4, 1, 0, 0);";
  import(make_db("osrt2020.sqlite", host_export(s.str())));
  EXPECT_EQ(rows("SELECT pid, tid, start_ns, dur_ns, end_ns, name, category, return_value, nesting_level FROM os_call "
                 "ORDER BY start_ns"),
            (std::vector<std::string>{"42|44|100|89900|90000|pthread_cond_wait|wait|0|0",
                                      "42|43|200|500|700|read|io|4096|0", "42|43|950|100|1050|ioctl|driver|0|0",
                                      "42|43|1600|100|1700|mmap64|memory|0|1", "42|43|1800|100|1900|poll|wait|1|0"}));
  // OS runtime tracing covers the whole process: the capture window is still the CUDA rows'.
  EXPECT_EQ(one("SELECT start_ns, end_ns FROM trace"), "900|1500");
  EXPECT_EQ(issue_count("host_table_columns_missing"), 0);
}

TEST_F(NsysImport, CpuSamples2024WithCallChainsInnermostFirst) {
  std::ostringstream s;
  s << "CREATE TABLE OSRT_API (" << kOsrt2024 << ");"
    << "INSERT INTO OSRT_API VALUES (200, 300, 27, " << gtid(42, 43) << ", 7, 0, 0, NULL);"
    << "CREATE TABLE COMPOSITE_EVENTS (" << kComposite << ");"
    << "INSERT INTO COMPOSITE_EVENTS VALUES (2, 1200, 3, 1, " << gtid(42, 43) << ", 99),"
    << " (1, 1100, 3, 1, " << gtid(42, 43) << ", 98), (3, 1300, 5, 1, " << gtid(42, 44) << ", 97);"
    << "CREATE TABLE SAMPLING_CALLCHAINS (" << kCallchains << ");"
    // stored out of order; sample 3 has no chain; chain 9 belongs to no sample
    << "INSERT INTO SAMPLING_CALLCHAINS VALUES (2, 11, 12, 0,0,0,0, 77, 7, 1), (1, 9, 10, 0,0,0,0, 55, 7, 0),"
       " (1, 11, 12, 0,0,0,0, 56, 7, 1), (2, 9, 10, 0,0,0,0, 76, 7, 0), (9, 9, 10, 0,0,0,0, 1, 7, 0);";
  import(make_db("sampling2024.sqlite", host_export(s.str())));
  EXPECT_EQ(rows("SELECT pid, tid, ts_ns, cpu, leaf FROM cpu_sample ORDER BY id"),
            (std::vector<std::string>{"42|43|1100|3|ImagingResample", "42|43|1200|3|ImagingResample",
                                      "42|44|1300|5|NULL"}));
  EXPECT_EQ(rows("SELECT s.ts_ns, f.depth, f.name, f.module FROM cpu_frame f JOIN cpu_sample s ON s.id = f.sample_id "
                 "ORDER BY s.ts_ns, f.depth"),
            (std::vector<std::string>{"1100|0|ImagingResample|/usr/lib/_imaging.so",
                                      "1100|1|_PyEval_EvalFrameDefault|libpython3.11.so",
                                      "1200|0|ImagingResample|/usr/lib/_imaging.so",
                                      "1200|1|_PyEval_EvalFrameDefault|libpython3.11.so"}));
  EXPECT_EQ(issue_count("cpu_sample_without_callchain"), 1);
  EXPECT_EQ(one("SELECT name, category FROM os_call"), "nanosleep|sleep");
  EXPECT_EQ(one("SELECT start_ns, end_ns FROM trace"), "900|1500");

  // A saved store read back into the model and written again keeps the same host rows.
  const std::string frames_sql = "SELECT sample_id, depth, name, module FROM cpu_frame ORDER BY sample_id, depth";
  auto frames = rows(frames_sql);
  auto samples = rows("SELECT * FROM cpu_sample ORDER BY id");
  auto calls = rows("SELECT * FROM os_call ORDER BY id");
  auto models = load_model(store_);
  ASSERT_EQ(models.size(), 1u);
  EXPECT_EQ(models[0].os_calls.size(), 1u);
  ASSERT_EQ(models[0].cpu_samples.size(), 3u);
  EXPECT_EQ(models[0].cpu_frames.size(), 4u);
  EXPECT_EQ(models[0].cpu_samples[2].frame_count, 0);
  clear_store(store_);
  write_models(store_, {&models[0]});
  EXPECT_EQ(rows(frames_sql), frames);
  EXPECT_EQ(rows("SELECT * FROM cpu_sample ORDER BY id"), samples);
  EXPECT_EQ(rows("SELECT * FROM os_call ORDER BY id"), calls);
}

TEST_F(NsysImport, HostTablesWithMissingColumnsAreIssuesNotFailures) {
  std::ostringstream s;
  s << "CREATE TABLE OSRT_API (start, end, eventClass, globalTid);"  // no nameId
    << "INSERT INTO OSRT_API VALUES (200, 300, 27, " << gtid(42, 43) << ");"
    << "CREATE TABLE COMPOSITE_EVENTS (id, start, cpu);"  // no globalTid
    << "INSERT INTO COMPOSITE_EVENTS VALUES (1, 1100, 3);"
    << "CREATE TABLE SAMPLING_CALLCHAINS (id, symbol);";  // no stackDepth: never read
  ImportResult r = import(make_db("broken_host.sqlite", host_export(s.str())));
  EXPECT_GT(r.rows, 0);
  EXPECT_EQ(issue_count("host_table_columns_missing"), 2);
  EXPECT_EQ(one("SELECT location, example FROM import_issue WHERE kind = 'host_table_columns_missing'"),
            "table OSRT_API|no column nameId");
  EXPECT_EQ(one("SELECT count(*) FROM os_call"), "0");
  EXPECT_EQ(one("SELECT count(*) FROM cpu_sample"), "0");
  EXPECT_EQ(one("SELECT count(*) FROM kernel"), "1");  // the rest of the export still loads
}

// OS call backtraces without their symbol column: named once as an issue, the calls still load
// (without a caller). With it, the caller is the first resolved frame above the call outside the
// C runtime libraries: frame 1 is libpthread, frame 2 unresolved, frame 3 the reader.
TEST_F(NsysImport, OsCallBacktracesGiveTheCallerOrAnIssue) {
  auto with_chains = [&](const std::string& name, const std::string& chain_columns, const std::string& chain_rows) {
    std::ostringstream s;
    s << "INSERT INTO StringIds VALUES (20, '__libc_read'), (21, '/usr/lib/libc.so.6'), (22, '__read_nocancel'),"
         " (23, '/usr/lib/x86_64-linux-gnu/libpthread-2.31.so'), (24, '0x7f00aa'), (25, '[Unknown]'),"
         " (26, 'Reader::fill'), (27, '/opt/app/libreader.so');"
      << "CREATE TABLE OSRT_API (" << kOsrt2024 << ");"
      << "INSERT INTO OSRT_API VALUES (200, 300, 27, " << gtid(42, 43) << ", 3, 0, 0, 5);"
      << "CREATE TABLE OSRT_CALLCHAINS (" << chain_columns << ");" << chain_rows;
    return make_db(name, host_export(s.str()));
  };
  import(with_chains("chains.sqlite", kCallchains,
                     "INSERT INTO OSRT_CALLCHAINS VALUES (5, 20, 21, 0, 0, 0, 0, 1, 7, 0), (5, 22, 23, 0, 0, 0, 0, 2, 7, 1),"
                     " (5, 24, 25, 0, 0, 1, 0, 3, 7, 2), (5, 26, 27, 0, 0, 0, 0, 4, 7, 3);"));
  EXPECT_EQ(rows("SELECT o.name, c.caller FROM os_call o JOIN os_call_caller c ON c.id = o.id"),
            (std::vector<std::string>{"read|Reader::fill"}));

  Store other = Store::create_in_memory();
  import_into(NsysImporter(), with_chains("chains_no_symbol.sqlite", "id, module, stackDepth", ""), other, ImportOptions{});
  SQLite::Statement q(other.db(), "SELECT (SELECT count(*) FROM os_call), (SELECT count(*) FROM os_call_caller),"
                                  " (SELECT example FROM import_issue WHERE kind = 'host_table_columns_missing')");
  ASSERT_TRUE(q.executeStep());
  EXPECT_EQ(q.getColumn(0).getInt64(), 1);
  EXPECT_EQ(q.getColumn(1).getInt64(), 0);
  EXPECT_EQ(q.getColumn(2).getString(), "no column symbol");
}

TEST_F(NsysImport, HostRowsWithoutThreadOrTimeAreCountedAndSkipped) {
  std::ostringstream s;
  s << "CREATE TABLE OSRT_API (" << kOsrt2024 << ");"
    << "INSERT INTO OSRT_API VALUES (200, 300, 27, NULL, 3, 0, 0, NULL), (NULL, 300, 27, " << gtid(42, 43)
    << ", 3, 0, 0, NULL), (500, 400, 27, " << gtid(42, 43) << ", 3, 0, 0, NULL), (600, 700, 27, " << gtid(42, 43)
    << ", NULL, 0, 0, NULL), (800, 900, 27, " << gtid(42, 43) << ", 3, 0, 0, NULL);"
    << "CREATE TABLE COMPOSITE_EVENTS (" << kComposite << ");"
    << "INSERT INTO COMPOSITE_EVENTS VALUES (1, NULL, 0, 1, " << gtid(42, 43) << ", 0), (2, 1000, 0, 1, NULL, 0),"
    << " (3, " << (int64_t{1} << 62) << ", 0, 1, " << gtid(42, 43) << ", 0), (4, 1000, 0, 1, " << gtid(42, 43)
    << ", 0);";
  import(make_db("bad_rows.sqlite", host_export(s.str())));
  EXPECT_EQ(rows("SELECT start_ns, dur_ns FROM os_call"), (std::vector<std::string>{"800|100"}));
  EXPECT_EQ(rows("SELECT ts_ns, leaf FROM cpu_sample"), (std::vector<std::string>{"1000|NULL"}));
  EXPECT_EQ(issue_count("os_call_without_thread"), 2);  // one OS call, one sample
  EXPECT_EQ(issue_count("missing_timestamp"), 2);       // OS call start NULL, sample start NULL
  EXPECT_EQ(issue_count("negative_duration"), 1);
  EXPECT_EQ(issue_count("api_call_without_name"), 1);
  EXPECT_EQ(issue_count("timestamp_out_of_range"), 1);
}

}  // namespace
}  // namespace proflint

// TARGET_INFO_SESSION_START_TIME anchors the export's clock on the epoch (docs/samples.md), read by
// hand with sqlite3: the 2022.2 saxpy export has utcEpochNs 1687813257637297504, no systemClockNs
// (its clock counts from the session's start), utcTime 21:00:57 and localTime 14:00:57 (UTC-07:00);
// the 2026 H100 export has utcEpochNs 1779630014975716426 at systemClockNs 35255823190, local = UTC.
TEST(NsysSessionClock, RealExportsRecordTheirEpochStartAndUtcOffset) {
  REALDATA_OR_SKIP(saxpy, "nsys/nsys2022_saxpy_mpi_all_tables.sqlite");
  REALDATA_OR_SKIP(h100, "nsys/nsys2026_h100_2gpu_1s.sqlite");
  proflint::TraceModel a, b;
  proflint::NsysImporter().import(saxpy, a, proflint::ImportOptions{});
  proflint::NsysImporter().import(h100, b, proflint::ImportOptions{});
  EXPECT_EQ(a.info.epoch_base_ns, std::optional<int64_t>(1'687'813'257'637'297'504));
  EXPECT_EQ(a.info.utc_offset_ns, std::optional<int64_t>(-7 * 3600 * int64_t{1'000'000'000}));
  EXPECT_EQ(b.info.epoch_base_ns, std::optional<int64_t>(1'779'630'014'975'716'426 - 35'255'823'190));
  EXPECT_EQ(b.info.utc_offset_ns, std::optional<int64_t>(0));
}
