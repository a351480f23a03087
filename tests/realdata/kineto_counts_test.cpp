// tests/realdata/kineto_counts_test.cpp — every Kineto trace of ../shared/realdata imports, and
// its fact counts equal an independent count made with Python's json module over the raw file.
//
// The expected numbers below come from this script (python3 count.py FILE...), which reads each
// whole file with json.load and counts by the same rules the importer documents: kernels include
// mtia_ccp_events; api calls are cuda_runtime, cuda_driver, Runtime and mtia_runtime; legacy
// `Operator` events named ProfilerStep#/Optimizer.*#/enumerate(DataLoader)# are user annotations,
// not cpu_ops; flow rows per (kind, id) are max(#s, #f) (pairs plus unpaired ends); devices are
// deviceProperties ids plus devices used by GPU events and CUDA memory samples.
/*
import gzip, json, sys, collections
LEGACY = ("ProfilerStep#", "Optimizer.step#", "Optimizer.zero_grad#", "enumerate(DataLoader)#")
def count(path):
    d = json.load((gzip.open if path.endswith('.gz') else open)(path, 'rt'))
    evs = d if isinstance(d, list) else d['traceEvents']
    top = {} if isinstance(d, list) else d
    c = collections.Counter(); devs = set(); flows = collections.Counter()
    for p in top.get('deviceProperties') or top.get('computeProperties') or []: devs.add(p['id'])
    for e in evs:
        cat, ph, a = e.get('cat'), e.get('ph'), e.get('args') or {}
        dev = a.get('device', e.get('pid'))
        if ph == 'X':
            if cat in ('kernel', 'Kernel', 'mtia_ccp_events'): c['kernel'] += 1; devs.add(dev)
            elif cat in ('gpu_memcpy', 'Memcpy'): c['memcpy'] += 1; devs.add(dev)
            elif cat in ('gpu_memset', 'Memset'): c['memset'] += 1; devs.add(dev)
            elif cat in ('cuda_runtime', 'cuda_driver', 'Runtime', 'mtia_runtime'): c['api'] += 1
            elif cat == 'cpu_op' or (cat == 'Operator' and not e['name'].startswith(LEGACY)): c['cpu_op'] += 1
            elif cat in ('user_annotation', 'Operator') and e['name'].startswith('ProfilerStep#'): c['steps'] += 1
            elif cat == 'cuda_sync': c['sync'] += 1; devs.add(dev)
            elif cat == 'gpu_user_annotation': devs.add(dev)
            elif cat == 'cuda_profiler_range':
                devs.add(dev); c['counter'] += sum(1 for v in a.values() if isinstance(v, (int, float)) and not isinstance(v, bool))
        elif ph in ('i', 'I') and e.get('name') == '[memory]':
            c['memory'] += 1
            if a.get('Device Type') != 0 and a.get('Device Id', -1) >= 0: devs.add(a['Device Id'])
        elif ph in ('s', 'f'):
            k = 'ac2g' if cat in ('ac2g', 'async', 'async_gpu', 'async_cpu_to_gpu') else cat
            flows[(k, e['id'], ph)] += 1
    keys = {(k, i) for (k, i, _) in flows}
    c['flow'] = sum(max(flows[(k, i, 's')], flows[(k, i, 'f')]) for (k, i) in keys)
    di = top.get('distributedInfo') or {}
    devs = {x for x in devs if isinstance(x, int) and x >= 0}
    return dict(events=len(evs), devices=len(devs), rank=di.get('rank'), world=di.get('world_size'), **c)
for p in sys.argv[1:]:
    r = count(p)
    print(p.split('/')[-1], ' '.join(f'{k}={v}' for k, v in r.items()))
*/
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "engine/pipeline/load.hpp"
#include "engine/common/error.hpp"
#include "engine/import/kineto/kineto_importer.hpp"
#include "engine/store/store.hpp"
#include "tests/support/realdata.hpp"

namespace proflint {
namespace {

constexpr int64_t kNone = -1;  // rank / world size not recorded

struct Expected {
  const char* file;
  int64_t events, devices, rank, world, kernels, memcpys, memsets, api_calls, cpu_ops, profiler_steps, memory_samples, flows,
      syncs, counters;
};

const Expected kExpected[] = {
    {"gpupuzzlers_cudagraph_mwe.json.gz", 3843, 1, kNone, kNone, 285, 221, 0, 518, 396, 0, 0, 738, 0, 0},
    {"hta_a100_16rank_rank0.json.gz", 108936, 8, 0, 16, 6080, 1390, 277, 33924, 25185, 5, 0, 35071, 0, 0},
    {"hta_alexnet_a100_inference.json.gz", 1408, 8, 0, kNone, 79, 16, 3, 361, 359, 0, 0, 361, 41, 0},
    {"hta_amd_mi250_minitoy.json.gz", 220, 4, kNone, kNone, 14, 2, 0, 21, 70, 2, 0, 25, 0, 0},
    {"hta_backward_thread_excerpt.json", 7, 1, 0, kNone, 1, 0, 0, 1, 3, 1, 0, 0, 0, 0},
    {"hta_cpu_only_rank34.pt.trace.json.gz", 30, 0, 34, 300, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0},
    {"hta_cupti_range_profiler_no_kernels.json.gz", 4222, 8, 0, kNone, 0, 0, 0, 1862, 375, 0, 0, 1862, 0, 693},
    {"hta_ddp_v100_rank1.json.gz", 216092, 2, 1, 2, 19370, 2040, 880, 42373, 56680, 5, 28010, 42373, 0, 0},
    {"hta_event_sync.json.gz", 92, 8, 0, kNone, 4, 1, 0, 12, 10, 1, 0, 14, 4, 0},
    {"hta_event_sync_multistream.json.gz", 149, 8, 0, kNone, 3, 0, 3, 39, 6, 0, 0, 42, 5, 0},
    {"hta_mtia_inference.json.gz", 16158, 1, kNone, kNone, 1313, 0, 0, 823, 10346, 0, 0, 1182, 0, 0},
    {"hta_no_distributed_info.json.gz", 2467, 8, kNone, kNone, 0, 0, 0, 0, 2424, 1, 0, 0, 0, 0},
    {"hta_ns_resolution.pt.trace.json.gz", 68692, 8, 0, 1, 4350, 1600, 145, 15329, 23910, 5, 0, 16234, 0, 0},
    {"hta_sampled_rank-0.json.gz", 4855, 1, 0, 128, 1154, 40, 10, 1204, 2329, 2, 0, 0, 0, 0},
    {"hta_sampled_rank-1.json.gz", 4720, 1, 1, 128, 1104, 40, 10, 1154, 2302, 2, 0, 0, 0, 0},
    {"hta_triton_example.json.gz", 71, 8, kNone, kNone, 1, 0, 0, 2, 3, 1, 0, 2, 0, 0},
    {"param_linear_fp32.json.gz", 86859, 8, kNone, kNone, 8716, 0, 1640, 14515, 36998, 0, 0, 14515, 0, 0},
    {"param_resnet.json.gz", 111631, 8, kNone, kNone, 9628, 123, 362, 25928, 39416, 0, 0, 25928, 0, 0},
    {"tb_resnet50_autograd_api_no_steps.pt.trace.json.gz", 79711, 1, kNone, kNone, 9329, 338, 466, 15754, 33517, 0, 0, 10133, 0, 0},
    {"tb_resnet50_bare_array_workers0.pt.trace.json.gz", 82276, 1, kNone, kNone, 9538, 12, 377, 10800, 42414, 6, 0, 9927, 0, 0},
    {"tb_resnet50_v100_workers0.pt.trace.json.gz", 75718, 4, kNone, kNone, 8772, 12, 312, 11923, 23622, 6, 12838, 9096, 0, 0},
    {"tb_resnet50_v100_workers4.pt.trace.json.gz", 71424, 4, kNone, kNone, 8868, 12, 378, 12085, 20538, 6, 10980, 9258, 0, 0},
    {"tb_tiny_compute_properties.json", 340, 4, kNone, kNone, 30, 2, 0, 42, 175, 1, 0, 32, 0, 0},
    {"tracelens_b200_eager.json.gz", 24656, 8, 0, 8, 768, 161, 0, 1372, 4809, 0, 0, 1372, 0, 0},
    {"tracelens_h100_bert_small.json.gz", 2551, 1, kNone, kNone, 60, 1, 0, 132, 479, 1, 236, 132, 0, 0},
    {"tracelens_h100_qwen_0.5b.json.gz", 18221, 1, kNone, kNone, 1465, 1, 241, 1922, 4186, 1, 2450, 2431, 0, 0},
    {"tracelens_mi210_gpu_only.json.gz", 2443, 4, kNone, kNone, 562, 0, 0, 631, 0, 0, 0, 631, 0, 0},
    {"tracelens_mi300_resnet_act_checkpoint.json.gz", 56451, 8, 0, 8, 2995, 550, 108, 3100, 8004, 3, 0, 4362, 0, 0},
    {"tracelens_mi300x_vllm_decode_graph_replay.json.gz", 1993, 8, 0, 1, 425, 9, 0, 20, 100, 0, 0, 441, 0, 0},
    {"tracelens_torch_compile_triton.json.gz", 246, 2, kNone, kNone, 12, 0, 0, 59, 41, 0, 0, 59, 0, 0},
};

class KinetoRealData : public ::testing::TestWithParam<Expected> {};

int64_t scalar(Store& store, const std::string& sql) {
  SQLite::Statement q(store.db(), sql);
  if (!q.executeStep() || q.getColumn(0).isNull()) return kNone;
  return q.getColumn(0).getInt64();
}

TEST_P(KinetoRealData, CountsMatchAnIndependentCount) {
  const Expected& e = GetParam();
  REALDATA_OR_SKIP(path, std::string("kineto/") + e.file);
  Store store = Store::create_in_memory();
  ImportResult r = import_into(KinetoImporter(), path, store, {});
  EXPECT_EQ(r.issues, 0);
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM import_issue"), 0);
  EXPECT_EQ(scalar(store, "SELECT event_count FROM trace"), e.events);
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM device"), e.devices);
  EXPECT_EQ(scalar(store, "SELECT rank FROM trace"), e.rank);
  EXPECT_EQ(scalar(store, "SELECT world_size FROM trace"), e.world);
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM kernel"), e.kernels);
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM memcpy"), e.memcpys);
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM memset"), e.memsets);
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM api_call"), e.api_calls);
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM range WHERE kind = 'cpu_op'"), e.cpu_ops);
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM range WHERE kind = 'user_annotation' AND name LIKE 'ProfilerStep#%'"), e.profiler_steps);
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM memory_sample"), e.memory_samples);
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM flow"), e.flows);
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM sync_event"), e.syncs);
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM counter"), e.counters);
  // Every GPU event landed on a device that has a row.
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM kernel WHERE device_id NOT IN (SELECT device_id FROM device)"), 0);
}

INSTANTIATE_TEST_SUITE_P(AllFiles, KinetoRealData, ::testing::ValuesIn(kExpected), [](const auto& info) {
  std::string name = info.param.file;
  name = name.substr(0, name.find('.'));
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
});

TEST(KinetoRealDataFolder, EveryFileImportsAndIsInTheTable) {
  REALDATA_OR_SKIP(dir, "kineto");
  std::set<std::string> known;
  for (const auto& e : kExpected) known.insert(e.file);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    ++files;
    std::string name = entry.path().filename().string();
    EXPECT_TRUE(known.count(name)) << name << " has no expected counts in kExpected";
    Store store = Store::create_in_memory();
    EXPECT_NO_THROW(import_into(KinetoImporter(), entry.path().string(), store, {})) << name;
  }
  EXPECT_GE(files, 28);
}

class KinetoRealFile : public ::testing::Test {
 protected:
  Store store_ = Store::create_in_memory();
  std::string text(const std::string& sql) {
    SQLite::Statement q(store_.db(), sql);
    if (!q.executeStep() || q.getColumn(0).isNull()) return "<null>";
    return q.getColumn(0).getString();
  }
};

TEST_F(KinetoRealFile, ResNet50V100Workers0) {
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz");
  import_into(KinetoImporter(), path, store_, {});
  EXPECT_EQ(text("SELECT group_concat(device_id || ' ' || name || ' cc' || compute_major || '.' || compute_minor || ' ' || sm_count, '|') "
                 "FROM (SELECT * FROM device ORDER BY device_id)"),
            "0 Tesla V100-DGXS-32GB cc7.0 80|1 Tesla V100-DGXS-32GB cc7.0 80|2 Tesla V100-DGXS-32GB cc7.0 80|3 Tesla V100-DGXS-32GB cc7.0 80");
  EXPECT_EQ(text("SELECT group_concat(name, ',') FROM (SELECT name FROM range WHERE name LIKE 'ProfilerStep#%' ORDER BY start_ns)"),
            "ProfilerStep#5,ProfilerStep#6,ProfilerStep#7,ProfilerStep#8,ProfilerStep#9,ProfilerStep#10");
  EXPECT_EQ(text("SELECT count(*) FROM memcpy WHERE kind = 'htod' AND src_kind = 'pageable' AND dst_kind = 'device'"), "12");
  EXPECT_EQ(text("SELECT vendor || ' ' || framework || ' ' || clock || ' ' || format_version FROM trace"), "nvidia pytorch epoch 1");
  // Legacy traces: tids are strings, kernels are on "stream 7".
  EXPECT_EQ(text("SELECT group_concat(stream_id) FROM (SELECT DISTINCT stream_id FROM kernel)"), "7");
  EXPECT_EQ(text("SELECT count(*) FROM range WHERE kind = 'cpu_op' AND input_dims IS NOT NULL"), "23622");
}

TEST_F(KinetoRealFile, DdpRank1) {
  REALDATA_OR_SKIP(path, "kineto/hta_ddp_v100_rank1.json.gz");
  import_into(KinetoImporter(), path, store_, {});
  EXPECT_EQ(text("SELECT rank || '/' || world_size || ' ' || comm_backend FROM trace"), "1/2 nccl");
  EXPECT_EQ(text("SELECT count(*) FROM kernel WHERE device_id = 1"), "19370");
  EXPECT_EQ(text("SELECT count(*) FROM memory_sample WHERE device_id = 1"), text("SELECT count(*) FROM memory_sample WHERE device_id >= 0"));
}

TEST_F(KinetoRealFile, CpuOnlyRank34) {
  REALDATA_OR_SKIP(path, "kineto/hta_cpu_only_rank34.pt.trace.json.gz");
  import_into(KinetoImporter(), path, store_, {});
  EXPECT_EQ(text("SELECT rank || '/' || world_size || ' ' || comm_backend FROM trace"), "34/300 gloo");
  EXPECT_EQ(text("SELECT count(*) FROM kernel"), "0");
  EXPECT_EQ(text("SELECT clock FROM trace"), "monotonic");
}

TEST_F(KinetoRealFile, NanosecondFloatsAreExact) {
  REALDATA_OR_SKIP(path, "kineto/tracelens_h100_bert_small.json.gz");
  import_into(KinetoImporter(), path, store_, {});
  // "ts": 1419247333430.849, "dur": 3.136 in the file.
  EXPECT_EQ(text("SELECT start_ns || ' ' || dur_ns FROM kernel WHERE name LIKE '%indexSelectLargeIndex%' ORDER BY start_ns LIMIT 1"),
            "1419247333430849 3136");
  EXPECT_EQ(text("SELECT group_concat(kind, ',') FROM (SELECT DISTINCT kind FROM api_call ORDER BY kind)"), "driver,runtime");
}

TEST_F(KinetoRealFile, VendorsOfAmdAndMtiaTraces) {
  REALDATA_OR_SKIP(amd, "kineto/hta_amd_mi250_minitoy.json.gz");
  REALDATA_OR_SKIP(mtia, "kineto/hta_mtia_inference.json.gz");
  import_into(KinetoImporter(), amd, store_, {});
  import_into(KinetoImporter(), mtia, store_, {});
  EXPECT_EQ(text("SELECT group_concat(vendor, ',') FROM (SELECT vendor FROM trace ORDER BY trace_id)"), "amd,mtia");
  EXPECT_EQ(text("SELECT count(*) FROM api_call a JOIN trace t USING (trace_id) WHERE t.vendor = 'mtia' AND a.kind = 'other'"), "823");
}

}  // namespace
}  // namespace proflint
