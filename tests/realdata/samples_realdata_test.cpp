// tests/realdata/samples_realdata_test.cpp — every sampling log in ../shared/realdata/other loads
// and gives a sensible system view (issue 17).
//
// Expected figures were computed by hand from the raw files with python3 (csv / json / gzip):
// rows per GPU, mean utilization.gpu, peak memory.used, the GPU of an index-less row = its
// position modulo the GPU count (2 for the Titan X log, 8 for the H100 log: 2254 = 2 x 1127 and
// 45632 = 8 x 5704 rows), and for the memory timeline the bytes held after all events of one time
// stamp (pre-existing memory at the first time stamp): 7720 time stamps, peak 3,082,832,104 B.
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/analysis/summary.hpp"
#include "engine/pipeline/load.hpp"
#include "tests/support/realdata.hpp"

namespace proflint {
namespace {

const SampledGpu* gpu(const TraceSummary& s, int64_t id) {
  for (const auto& g : s.system_view.gpus)
    if (g.device_id == id) return &g;
  return nullptr;
}

TEST(SamplesRealdata, ClaraStyleA5000LogsHaveIndexAndUnitsInHeader) {
  struct Case {
    const char* file;
    int64_t rows;
    double mean_util, peak_mib;
  };
  for (const Case& c : {Case{"other/gpu_usage_log.csv", 77, 17.8961, 2324},
                        Case{"other/gpu_usage_log_resnet_224.csv", 22, 31.5455, 13002},
                        Case{"other/gpu_usage_log_resnet_512.csv", 23, 51.7826, 13067}}) {
    REALDATA_OR_SKIP(path, c.file);
    Store store = load_inputs({path}, {});
    auto sums = summarize(store);
    ASSERT_EQ(sums.size(), 1u) << c.file;
    EXPECT_EQ(sums[0].format, "nvidia-smi-csv");
    ASSERT_EQ(sums[0].system_view.gpus.size(), 1u) << c.file;
    const SampledGpu* g = gpu(sums[0], 0);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->name, "NVIDIA RTX A5000");
    ASSERT_TRUE(g->gpu_active);
    EXPECT_EQ(g->gpu_active->samples, c.rows) << c.file;
    EXPECT_NEAR(g->gpu_active->mean, c.mean_util, 1e-3) << c.file;
    ASSERT_TRUE(g->memory_used && g->memory_total_bytes);
    EXPECT_DOUBLE_EQ(g->memory_used->max, c.peak_mib * 1048576.0) << c.file;
    EXPECT_DOUBLE_EQ(*g->memory_total_bytes, 24564.0 * 1048576.0);
    ASSERT_TRUE(g->temperature);  // 'temperature[°C]' is read with its unit
    // No GPU-by-position guess with an index column.
    SQLite::Statement q(store.db(), "SELECT count(*) FROM import_issue WHERE kind = 'sample_gpu_by_position'");
    ASSERT_TRUE(q.executeStep());
    EXPECT_EQ(q.getColumn(0).getInt64(), 0);
  }
}

TEST(SamplesRealdata, TitanXTwoGpusInterleavedWithoutIndex) {
  REALDATA_OR_SKIP(path, "other/nvsmi_titanx_2gpu_ddp_100ms.csv");
  Store store = load_inputs({path}, {});
  auto sums = summarize(store);
  ASSERT_EQ(sums.size(), 1u);
  ASSERT_EQ(sums[0].system_view.gpus.size(), 2u);
  const double means[] = {41.8438, 41.8305};
  for (int64_t d = 0; d < 2; ++d) {
    const SampledGpu* g = gpu(sums[0], d);
    ASSERT_NE(g, nullptr);
    ASSERT_TRUE(g->gpu_active);
    EXPECT_EQ(g->gpu_active->samples, 1127);
    EXPECT_NEAR(g->gpu_active->mean, means[d], 1e-3);
    EXPECT_DOUBLE_EQ(g->memory_used->max, 3441.0 * 1048576.0);
  }
  EXPECT_NEAR(gpu(sums[0], 0)->power_draw->max, 187.32, 1e-9);
  EXPECT_NEAR(gpu(sums[0], 1)->power_draw->max, 178.34, 1e-9);
  SQLite::Statement q(store.db(), "SELECT example FROM import_issue WHERE kind = 'sample_gpu_by_position'");
  ASSERT_TRUE(q.executeStep());
  EXPECT_EQ(q.getColumn(0).getString(), "2 GPUs per burst");
}

TEST(SamplesRealdata, H100EightGpusSplitBurstsAndRankZeroImbalance) {
  REALDATA_OR_SKIP(path, "other/nvsmi_h100_8gpu_train_100ms.csv.gz");
  Store store = load_inputs({path}, {});
  auto sums = summarize(store);
  ASSERT_EQ(sums.size(), 1u);
  ASSERT_EQ(sums[0].system_view.gpus.size(), 8u);
  // Bursts split across a timestamp boundary do not change the position rule.
  const double means[] = {50.1525, 72.0033, 71.9053, 71.9471, 71.7870, 71.9458, 71.9414, 71.9625};
  for (int64_t d = 0; d < 8; ++d) {
    const SampledGpu* g = gpu(sums[0], d);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->gpu_active->samples, 5704);
    EXPECT_NEAR(g->gpu_active->mean, means[d], 1e-3) << "GPU " << d;
  }
  EXPECT_DOUBLE_EQ(gpu(sums[0], 0)->memory_used->max, 41403.0 * 1048576.0);
  EXPECT_NEAR(gpu(sums[0], 6)->power_draw->max, 598.09, 1e-9);
  // 698.6 s from the first to the last row.
  EXPECT_NEAR(static_cast<double>(sums[0].system_view.end_ns - sums[0].system_view.start_ns) / 1e9, 698.6, 0.1);
}

TEST(SamplesRealdata, TorchMemoryTimelineGzip) {
  REALDATA_OR_SKIP(path, "other/torch_memory_timeline.raw.gz");
  Store store = load_inputs({path}, {});
  auto sums = summarize(store);
  ASSERT_EQ(sums.size(), 1u);
  EXPECT_EQ(sums[0].format, "torch-memory-timeline");
  const SampledGpu* g = gpu(sums[0], 0);
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(g->memory_used);
  EXPECT_EQ(g->memory_used->samples, 7720);
  EXPECT_DOUBLE_EQ(g->memory_used->max, 3082832104.0);
  // The capture spans 0.987 s (epoch ns time stamps).
  EXPECT_EQ(sums[0].system_view.end_ns - sums[0].system_view.start_ns, 987186231);
  SQLite::Statement q(store.db(),
                      "SELECT value FROM sample WHERE metric = 'memory_allocated' ORDER BY ts_ns DESC LIMIT 1");
  ASSERT_TRUE(q.executeStep());
  EXPECT_DOUBLE_EQ(q.getColumn(0).getDouble(), 332060904.0);
}

}  // namespace
}  // namespace proflint
