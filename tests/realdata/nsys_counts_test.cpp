// tests/realdata/nsys_counts_test.cpp — the nsys importer on the real exports in
// ../shared/realdata/nsys (2020.3, 2022.2, 2026.1, 2026.2). Expected counts were computed
// independently with python3's sqlite3 over the raw files (see each number's comment).
#include <gtest/gtest.h>
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "engine/pipeline/load.hpp"
#include "engine/common/error.hpp"
#include "engine/import/importer.hpp"
#include "engine/import/nsys/nsys_importer.hpp"
#include "engine/store/store.hpp"
#include "tests/support/realdata.hpp"

namespace fs = std::filesystem;

namespace proflint {
namespace {

int64_t count(Store& store, const std::string& sql) {
  SQLite::Statement q(store.db(), sql);
  q.executeStep();
  return q.getColumn(0).getInt64();
}

std::string text(Store& store, const std::string& sql) {
  SQLite::Statement q(store.db(), sql);
  if (!q.executeStep()) return "<no row>";
  return q.getColumn(0).isNull() ? "NULL" : q.getColumn(0).getString();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

struct Expected {
  const char* file;
  int64_t kernels, memcpys, htod, memsets, api_calls, nvtx_ranges, syncs, devices, kernel_devices, threads, processes;
};

// python3: count(*) per CUPTI table with end >= start; memcpy copyKind = 1; RUNTIME distinct
// (globalTid >> 24, correlationId); NVTX_EVENTS eventType IN (59, 60) with end >= start; rows of
// TARGET_INFO_GPU (or distinct kernel deviceId without it); distinct globalTid of ThreadNames;
// distinct PROCESSES.pid, or ThreadNames main threads (tid == pid) where PROCESSES is absent.
const Expected kExpected[] = {
    {"nsys2020_cpython-nvtx-patch.sqlite", 0, 0, 0, 0, 0, 5441, 0, 2, 0, 1584, 374},
    {"nsys2020_cudf-groupby.sqlite", 195, 97, 69, 0, 942, 628, 205, 2, 1, 1418, 359},
    {"nsys2020_cudf.sqlite", 268, 144, 96, 14, 1161, 892, 240, 2, 1, 1425, 362},
    {"nsys2020_cupy.sqlite", 15, 0, 0, 0, 34, 5, 0, 2, 1, 1414, 359},
    {"nsys2020_multiprocessing.sqlite", 0, 0, 0, 0, 0, 5, 0, 2, 0, 1407, 362},
    {"nsys2020_numba-jit.sqlite", 1, 4, 3, 0, 14, 2, 0, 2, 1, 1410, 359},
    {"nsys2020_quickstart.sqlite", 0, 0, 0, 0, 0, 6, 0, 2, 0, 1399, 359},
    {"nsys2020_workflow.sqlite", 1002, 0, 0, 0, 1829, 4, 1, 2, 1, 1414, 359},
    // 95 RUNTIME rows = 57 calls + 38 nested 'CUDA backtrace' twins (checked by hand).
    {"nsys2022_saxpy_mpi_all_tables.sqlite", 5, 15, 10, 0, 57, 22, 0, 1, 1, 6, 1667},
    {"nsys2026_h100_2gpu_1s.sqlite", 3442, 904, 450, 22, 5796, 16782, 244, 2, 2, 843, 159},
    {"nsys2026_small.sqlite", 2, 1, 0, 0, 9, 0, 1, 1, 1, 411, 81},
};

class NsysRealData : public ::testing::TestWithParam<Expected> {};

TEST_P(NsysRealData, CountsMatchAnIndependentCount) {
  const Expected& e = GetParam();
  REALDATA_OR_SKIP(path, std::string("nsys/") + e.file);
  Store store = Store::create_in_memory();
  ImportResult r = import_file(path, store, ImportOptions{});
  EXPECT_EQ(text(store, "SELECT format FROM trace"), "nsys");
  EXPECT_EQ(count(store, "SELECT count(*) FROM _kernel"), e.kernels);
  EXPECT_EQ(count(store, "SELECT count(*) FROM _memcpy"), e.memcpys);
  EXPECT_EQ(count(store, "SELECT count(*) FROM _memcpy WHERE kind = 'htod'"), e.htod);
  EXPECT_EQ(count(store, "SELECT count(*) FROM _memset"), e.memsets);
  EXPECT_EQ(count(store, "SELECT count(*) FROM _api_call"), e.api_calls);
  EXPECT_EQ(count(store, "SELECT count(*) FROM _range WHERE kind = 'nvtx'"), e.nvtx_ranges);
  EXPECT_EQ(count(store, "SELECT count(*) FROM sync_event"), e.syncs);
  EXPECT_EQ(count(store, "SELECT count(*) FROM device"), e.devices);
  EXPECT_EQ(count(store, "SELECT count(DISTINCT device_id) FROM _kernel"), e.kernel_devices);
  EXPECT_EQ(count(store, "SELECT count(*) FROM thread"), e.threads);
  EXPECT_EQ(count(store, "SELECT count(*) FROM process"), e.processes);
  EXPECT_EQ(r.rows, count(store, "SELECT (SELECT count(*) FROM _kernel) + (SELECT count(*) FROM _memcpy) +"
                                 " (SELECT count(*) FROM _memset) + (SELECT count(*) FROM _api_call) +"
                                 " (SELECT count(*) FROM _range) + (SELECT count(*) FROM sync_event) +"
                                 " (SELECT count(*) FROM memory_sample) + (SELECT count(*) FROM _counter) +"
                                 " (SELECT count(*) FROM _os_call) + (SELECT count(*) FROM _cpu_sample)"));
  // Every API name lost its CUPTI suffix; every activity device has a device row.
  EXPECT_EQ(count(store, "SELECT count(*) FROM api_call WHERE name GLOB '*_v[0-9][0-9][0-9][0-9]*'"), 0);
  EXPECT_EQ(count(store, "SELECT count(*) FROM (SELECT device_id FROM _kernel UNION SELECT device_id FROM _memcpy)"
                         " WHERE device_id NOT IN (SELECT device_id FROM device)"),
            0);
  EXPECT_EQ(count(store, "SELECT count(*) FROM import_issue WHERE kind = 'table_unreadable'"), 0);
}

INSTANTIATE_TEST_SUITE_P(AllExports, NsysRealData, ::testing::ValuesIn(kExpected),
                         [](const ::testing::TestParamInfo<Expected>& info) {
                           std::string name = fs::path(info.param.file).stem().string();
                           for (char& c : name)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(NsysRealDataDetail, H100ContainerCaptureHasNoGpuTable) {
  REALDATA_OR_SKIP(path, "nsys/nsys2026_h100_2gpu_1s.sqlite");
  Store store = Store::create_in_memory();
  import_file(path, store, ImportOptions{});
  EXPECT_EQ(text(store, "SELECT tool_version || ' ' || format_version || ' ' || framework || ' ' || clock FROM trace"),
            "2026.2.1.210 3.25.0 pytorch session");
  EXPECT_EQ(count(store, "SELECT count(*) FROM device WHERE name IS NULL AND compute_major IS NULL"), 2);
  EXPECT_EQ(count(store, "SELECT count FROM import_issue WHERE kind = 'device_inferred_from_kernel_names'"), 2);
  EXPECT_EQ(count(store, "SELECT count(*) FROM _kernel WHERE device_id = 0"), 1721);
  EXPECT_EQ(count(store, "SELECT count(*) FROM _memcpy WHERE kind = 'htod' AND src_kind = 'pinned'"), 446);
  EXPECT_EQ(count(store, "SELECT count(*) FROM _memcpy WHERE kind = 'dtod'"), 450);
  EXPECT_EQ(count(store, "SELECT count(*) FROM sync_event WHERE kind = 'stream_wait_event'"), 236);
  EXPECT_EQ(count(store, "SELECT count(*) FROM api_call WHERE name = 'cudaLaunchKernelExC'"), 558);
  // 157 streams per process in TARGET_INFO_CUDA_STREAM, placed on their device through the
  // (pid, context) of the kernels, plus the two streams the work ran on (7 and 15), which that
  // table does not list.
  EXPECT_EQ(count(store, "SELECT count(*) FROM stream"), 316);
}

TEST(NsysRealDataDetail, SaxpyRuntimeDuplicatesAreMergedIntoOneCallEach) {
  REALDATA_OR_SKIP(path, "nsys/nsys2022_saxpy_mpi_all_tables.sqlite");
  Store store = Store::create_in_memory();
  import_file(path, store, ImportOptions{});
  std::map<std::string, int64_t> by_name;
  SQLite::Statement q(store.db(), "SELECT name, count(*) FROM api_call GROUP BY name");
  while (q.executeStep()) by_name[q.getColumn(0).getString()] = q.getColumn(1).getInt64();
  EXPECT_EQ(by_name, (std::map<std::string, int64_t>{{"cuModuleGetLoadingMode", 1}, {"cudaFree", 3},
                                                     {"cudaHostRegister", 9}, {"cudaHostUnregister", 9},
                                                     {"cudaLaunchKernel", 5}, {"cudaMalloc", 15}, {"cudaMemcpy", 15}}));
  // The outer (backtrace) row is kept: correlation 135 spans 884995616..885386920.
  EXPECT_EQ(text(store, "SELECT start_ns || '+' || dur_ns FROM api_call WHERE correlation_id = 135"), "884995616+391304");
  EXPECT_EQ(text(store, "SELECT tool_version || ' ' || format_version FROM trace"), "2022.2.1.31 2.9.1");
  EXPECT_EQ(text(store, "SELECT name || ' ' || compute_major || '.' || compute_minor || ' ' || sm_count FROM device"),
            "NVIDIA A100-SXM4-40GB 8.0 108");
  EXPECT_EQ(text(store, "SELECT group_concat(DISTINCT domain) FROM range"), "MPI");
}

TEST(NsysRealDataDetail, Nsys2020DevicesComeFromThe2020Tables) {
  for (const char* file : {"nsys2020_cudf.sqlite", "nsys2020_quickstart.sqlite"}) {
    REALDATA_OR_SKIP(path, std::string("nsys/") + file);
    Store store = Store::create_in_memory();
    import_file(path, store, ImportOptions{});
    EXPECT_EQ(count(store, "SELECT count(*) FROM device WHERE name = 'Quadro RTX 8000' AND vendor = 'nvidia'"), 2) << file;
    EXPECT_EQ(text(store, "SELECT coalesce(tool_version, 'NULL') || coalesce(format_version, 'NULL') FROM trace"), "NULLNULL");
    if (std::string(file) == "nsys2020_cudf.sqlite") {
      // TARGET_INFO_CUDA_GPU: compute capability 7.5, 72 SMs, memory in MiB.
      EXPECT_EQ(text(store, "SELECT compute_major || '.' || compute_minor || ' ' || sm_count || ' ' || memory_bytes"
                            " FROM device WHERE device_id = 0"),
                "7.5 72 " + std::to_string(int64_t{48601} * 1024 * 1024));
      EXPECT_EQ(count(store, "SELECT count(*) FROM range WHERE domain = 'libcudf'"), 718);
      EXPECT_EQ(count(store, "SELECT count(*) FROM memcpy WHERE kind = 'dtod'"), 12);
    } else {
      EXPECT_EQ(count(store, "SELECT count(*) FROM device WHERE compute_major IS NULL"), 2);
    }
  }
}

// nsys2020_cudf records a backtrace for every OS call (OSRT_API.callchainId -> OSRT_CALLCHAINS).
// By hand (python3 over the raw tables, the rule of read_os_call_callers: first frame above depth
// 0 that is resolved, not a '0x' address and outside libc/libpthread/ld/libstdc++...): 4,809 calls
// (the 2 profiling markers left out), 345 with a caller; the 6 Python file reads come from _Py_read,
// the 178 most common from cudaMemsetAsync (ioctl inside it); libcuda frames are unresolved.
TEST(NsysRealDataDetail, Nsys2020OsCallsNameTheirCaller) {
  REALDATA_OR_SKIP(path, "nsys/nsys2020_cudf.sqlite");
  Store store = Store::create_in_memory();
  import_file(path, store, ImportOptions{});
  EXPECT_EQ(count(store, "SELECT count(*) FROM os_call"), 4809);
  EXPECT_EQ(count(store, "SELECT count(*) FROM os_call_caller"), 345);
  EXPECT_EQ(count(store, "SELECT count(*) FROM os_call o JOIN os_call_caller c ON c.id = o.id WHERE o.name = 'read' AND "
                         "c.caller = '_Py_read'"),
            6);
  EXPECT_EQ(text(store, "SELECT c.caller FROM os_call o JOIN os_call_caller c ON c.id = o.id GROUP BY c.caller "
                        "ORDER BY count(*) DESC LIMIT 1"),
            "cudaMemsetAsync");
}

TEST(NsysRealDataDetail, Small2026HasNoNvtxTable) {
  REALDATA_OR_SKIP(path, "nsys/nsys2026_small.sqlite");
  Store store = Store::create_in_memory();
  import_file(path, store, ImportOptions{});
  EXPECT_EQ(count(store, "SELECT count(*) FROM range"), 0);
  EXPECT_EQ(text(store, "SELECT name || ' ' || compute_major || '.' || compute_minor || ' ' || sm_count || ' ' ||"
                        " memory_bytes FROM device"),
            "NVIDIA GeForce RTX 3080 8.6 68 10736893952");
  EXPECT_EQ(text(store, "SELECT kind || ' ' || src_kind || ' ' || dst_kind FROM memcpy"), "dtoh device pinned");
  EXPECT_EQ(text(store, "SELECT framework FROM trace"), "NULL");
}

TEST(NsysRealDataDetail, ImportLeavesEveryExportUnchanged) {
  for (const auto& e : kExpected) {
    REALDATA_OR_SKIP(path, std::string("nsys/") + e.file);
    std::string before = slurp(path);
    auto mtime = fs::last_write_time(path);
    Store store = Store::create_in_memory();
    import_file(path, store, ImportOptions{});
    EXPECT_EQ(fs::last_write_time(path), mtime) << e.file;
    EXPECT_TRUE(slurp(path) == before) << e.file << " changed on disk";
    for (const char* suffix : {"-journal", "-wal", "-shm"}) EXPECT_FALSE(fs::exists(path + suffix)) << e.file;
  }
}

// Environment entries (KEY=VALUE) that nsys dumped into TARGET_INFO_SYSTEM_ENV and
// META_DATA_CAPTURE, plus the host name. Read here only to prove none reaches the store.
std::vector<std::string> environment_entries(const std::string& path) {
  std::vector<std::string> entries;
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  auto split = [&](const std::string& blob) {
    size_t start = 0;
    for (size_t i = 0; i <= blob.size(); ++i)
      if (i == blob.size() || blob[i] == '\0') {
        if (i > start) entries.push_back(blob.substr(start, i - start));
        start = i + 1;
      }
  };
  if (raw.tableExists("TARGET_INFO_SYSTEM_ENV")) {
    SQLite::Statement q(raw, "SELECT name, CAST(value AS BLOB) FROM TARGET_INFO_SYSTEM_ENV"
                             " WHERE name IN ('DeviceEnvironment', 'Hostname')");
    while (q.executeStep()) {
      auto col = q.getColumn(1);
      std::string value(static_cast<const char*>(col.getBlob()), static_cast<size_t>(col.getBytes()));
      if (q.getColumn(0).getString() == "Hostname") entries.push_back("HOSTNAME=" + value);
      else split(value);
    }
  }
  if (raw.tableExists("META_DATA_CAPTURE")) {
    SQLite::Statement q(raw, "SELECT CAST(value AS BLOB) FROM META_DATA_CAPTURE WHERE name LIKE '%ENVIRONMENT%'");
    while (q.executeStep()) {
      auto col = q.getColumn(0);
      split(std::string(static_cast<const char*>(col.getBlob()), static_cast<size_t>(col.getBytes())));
    }
  }
  return entries;
}

// Every text value of the store except trace.path (our own argument), sorted.
std::vector<std::string> store_texts(Store& store) {
  std::vector<std::string> texts;
  std::vector<std::string> tables;
  SQLite::Statement t(store.db(), "SELECT name FROM sqlite_master WHERE type = 'table'");
  while (t.executeStep()) tables.push_back(t.getColumn(0).getString());
  for (const auto& table : tables) {
    SQLite::Statement q(store.db(), "SELECT * FROM \"" + table + "\"");
    while (q.executeStep())
      for (int c = 0; c < q.getColumnCount(); ++c)
        if (q.getColumn(c).isText() && !(table == "trace" && std::string(q.getColumnName(c)) == "path"))
          texts.push_back(q.getColumn(c).getString());
  }
  std::sort(texts.begin(), texts.end());
  return texts;
}

TEST(NsysRealDataDetail, EnvironmentDumpsNeverReachTheStore) {
  for (const char* file : {"nsys2022_saxpy_mpi_all_tables.sqlite", "nsys2026_h100_2gpu_1s.sqlite"}) {
    REALDATA_OR_SKIP(path, std::string("nsys/") + file);
    std::vector<std::string> entries = environment_entries(path);
    ASSERT_GT(entries.size(), 20u) << file;

    // A copy without the environment dumps (and without the export rows naming user, host and
    // paths) must give exactly the same store: the importer does not read them at all.
    fs::path dir = fs::temp_directory_path() / ("proflint_nsys_privacy_" + std::to_string(getpid()));
    fs::create_directories(dir);
    std::string stripped = (dir / file).string();
    fs::copy_file(path, stripped, fs::copy_options::overwrite_existing);
    fs::permissions(stripped, fs::perms::owner_read | fs::perms::owner_write);
    {
      SQLite::Database db(stripped, SQLite::OPEN_READWRITE);
      db.exec("DROP TABLE IF EXISTS TARGET_INFO_SYSTEM_ENV; DROP TABLE IF EXISTS META_DATA_CAPTURE");
      for (const char* meta : {"META_DATA_EXPORT", "EXPORT_META_DATA"})
        if (db.tableExists(meta))
          db.exec(std::string("DELETE FROM ") + meta +
                  " WHERE name NOT IN ('EXPORT_PRODUCT_VERSION', 'EXPORT_SCHEMA_VERSION')");
    }
    Store store = Store::create_in_memory();
    import_file(path, store, ImportOptions{});
    Store clean = Store::create_in_memory();
    import_file(stripped, clean, ImportOptions{});
    fs::remove_all(dir);
    std::vector<std::string> texts = store_texts(store);
    EXPECT_GT(texts.size(), 100u) << file;
    EXPECT_TRUE(texts == store_texts(clean)) << file << ": the environment tables changed the store";

    // And no environment text appears anywhere: whole entries, values of 6+ characters and
    // variable names of 8+ (shorter ones such as '1' or 'PATH' occur in any text by chance).
    // Values that the export's own activity data also yields (e.g. a vendor variable set to
    // 'nvidia', the nsys version) are legitimately in the store and are left out.
    std::vector<std::string> clean_texts = store_texts(clean);
    auto in_clean = [&](const std::string& needle) {
      return std::any_of(clean_texts.begin(), clean_texts.end(),
                         [&](const std::string& t) { return t.find(needle) != std::string::npos; });
    };
    std::vector<std::string> needles;
    for (const auto& entry : entries) {
      size_t eq = entry.find('=');
      if (eq == std::string::npos || eq == 0) continue;
      std::vector<std::string> candidates;
      if (entry.size() >= 6) candidates.push_back(entry);
      if (entry.size() - eq - 1 >= 6) candidates.push_back(entry.substr(eq + 1));
      if (eq >= 8) candidates.push_back(entry.substr(0, eq));
      for (auto& c : candidates)
        if (!in_clean(c)) needles.push_back(std::move(c));
    }
    EXPECT_GT(needles.size(), entries.size() / 2) << file;
    for (const auto& value : texts)
      for (size_t i = 0; i < needles.size(); ++i)
        // The needle itself is never printed: it may be a secret.
        EXPECT_EQ(value.find(needles[i]), std::string::npos) << file << ": environment text #" << i << " is in the store";
  }
}

TEST(NsysRealDataDetail, TruncatedCopyIsAnErrorOrAPartialImport) {
  REALDATA_OR_SKIP(path, "nsys/nsys2026_h100_2gpu_1s.sqlite");
  std::string bytes = slurp(path);
  fs::path dir = fs::temp_directory_path() / ("proflint_nsys_truncated_" + std::to_string(getpid()));
  fs::create_directories(dir);
  for (double fraction : {0.05, 0.3, 0.6, 0.95}) {
    auto cut = (dir / ("cut_" + std::to_string(static_cast<int>(fraction * 100)) + ".sqlite")).string();
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, static_cast<size_t>(static_cast<double>(bytes.size()) * fraction));
    Store store = Store::create_in_memory();
    try {
      ImportResult r = import_file(cut, store, ImportOptions{});
      EXPECT_GT(r.issues, 0) << "cut at " << fraction << ": a partial import must report what it could not read";
      EXPECT_GT(count(store, "SELECT count(*) FROM import_issue WHERE kind = 'table_unreadable'"), 0);
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(cut + ": ", 0), 0u) << e.what();
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace proflint
