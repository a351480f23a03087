// tests/detectors/dp_instead_of_ddp_test.cpp — dp-instead-of-ddp fires on single-process multi-GPU DataParallel.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

namespace {

const char* kId = "dp-instead-of-ddp";

struct TraceShape {
  std::string wrapper = "DataParallel.forward";  // annotation around the forward
  int devices = 2;                               // GPUs the replicas run on
  bool backward_nodes = true;                    // BroadcastBackward in backward
};

// A tiny PyTorch-profiler trace of 3 steps: the main thread (tid 100) runs `wrapper`; replica
// threads 201/202 launch one GEMM each on GPU 0/1; backward reduces the gradients to GPU 0.
std::string make_trace(const TraceShape& shape) {
  std::string ev;
  auto add = [&](const std::string& e) { ev += (ev.empty() ? "" : ",\n") + e; };
  int64_t ext = 1, corr = 1000;
  const double t0 = 1700000000000000.0;
  for (int s = 0; s < 3; ++s) {
    double t = t0 + s * 10000.0;
    add(fmt::format(R"({{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":100,"tid":100,"ts":{:.3f},"dur":9900,"args":{{"External id":{}}}}})", s + 1, t, ext++));
    add(fmt::format(R"({{"ph":"X","cat":"user_annotation","name":"{}","pid":100,"tid":100,"ts":{:.3f},"dur":5000,"args":{{"External id":{}}}}})", shape.wrapper, t + 100, ext++));
    for (int d = 0; d < shape.devices; ++d) {
      int tid = 201 + d;
      double ts = t + 1000 + 300 * d;
      int64_t e = ext++, c = corr++;
      add(fmt::format(R"({{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":100,"tid":{},"ts":{:.3f},"dur":60,"args":{{"External id":{}}}}})", tid, ts, e));
      add(fmt::format(R"({{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":{},"ts":{:.3f},"dur":8,"args":{{"External id":{},"correlation":{}}}}})", tid, ts + 10, e, c));
      add(fmt::format(R"({{"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":{},"tid":7,"ts":{:.3f},"dur":{},"args":{{"External id":{},"device":{},"stream":7,"correlation":{}}}}})", d, ts + 30, d == 0 ? 3000 : 2500, e, d, c));
    }
    if (shape.backward_nodes) {
      int64_t e = ext++, c = corr++;
      double ts = t + 6000;
      add(fmt::format(R"({{"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: BroadcastBackward","pid":100,"tid":100,"ts":{:.3f},"dur":400,"args":{{"External id":{}}}}})", ts, e));
      add(fmt::format(R"({{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":100,"ts":{:.3f},"dur":8,"args":{{"External id":{},"correlation":{}}}}})", ts + 20, e, c));
      add(fmt::format(R"({{"ph":"X","cat":"kernel","name":"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>","pid":0,"tid":7,"ts":{:.3f},"dur":500,"args":{{"External id":{},"device":0,"stream":7,"correlation":{}}}}})", ts + 40, e, c));
    }
  }
  return R"({"schemaVersion": 1, "deviceProperties": [
    {"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "computeMinor": 0, "numSms": 108},
    {"id": 1, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "computeMinor": 0, "numSms": 108}],
  "traceEvents": [
)" + ev + "\n]}\n";
}

std::string write_trace(const std::string& name, const TraceShape& shape) {
  auto dir = std::filesystem::temp_directory_path() / "proflint_dp_test";
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::ofstream(path) << make_trace(shape);
  return path.string();
}

}  // namespace

TEST(DpInsteadOfDdp, FiresOnDataParallelDrivingTwoGpus) {
  auto r = analyze_with(write_trace("dp.json", {}), kId);
  auto f = findings_of(r, kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["pid"], 100);
  EXPECT_EQ(f[0].evidence["devices"], 2);
  EXPECT_EQ(f[0].evidence["launching_threads"], 3);  // two replica threads + the main thread's backward
  EXPECT_EQ(f[0].evidence["markers"].size(), 2u);
  EXPECT_EQ(f[0].evidence["machinery_ns"], 3 * 400000);  // BroadcastBackward, 400 µs per step
  EXPECT_DOUBLE_EQ(f[0].confidence, 0.8);
  // min(machinery, idle of GPU 0) x 0.5
  EXPECT_EQ(f[0].estimated_savings_ns, 600000);
  EXPECT_NE(f[0].problem.find("One process (pid 100) launches the GPU work of 2 devices"), std::string::npos) << f[0].problem;
  EXPECT_NE(f[0].recommendation.find("torchrun --nproc_per_node"), std::string::npos);
  EXPECT_NE(f[0].recommendation.find("DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])"), std::string::npos);
}

TEST(DpInsteadOfDdp, FixtureIsThisTestsTrace) {
  // fixtures/dataparallel_2gpu.json (used by the golden case) is make_trace({}) written out.
  std::ifstream in(fixture_path("dataparallel_2gpu.json"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, make_trace({}));
}

TEST(DpInsteadOfDdp, FiresWithoutBackwardNodes) {
  TraceShape shape;
  shape.backward_nodes = false;
  auto f = findings_of(analyze_with(write_trace("dp_fwd_only.json", shape), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["machinery_ns"], 0);
  EXPECT_NE(f[0].savings_method.find("idle time of the busiest GPU"), std::string::npos);
}

TEST(DpInsteadOfDdp, SilentOnDistributedDataParallel) {
  TraceShape shape;
  shape.wrapper = "DistributedDataParallel.forward";
  shape.backward_nodes = false;
  EXPECT_TRUE(findings_of(analyze_with(write_trace("ddp.json", shape), kId), kId).empty());
}

TEST(DpInsteadOfDdp, SilentOnDataParallelOverOneGpu) {
  TraceShape shape;
  shape.devices = 1;
  EXPECT_TRUE(findings_of(analyze_with(write_trace("dp_one_gpu.json", shape), kId), kId).empty());
}

TEST(DpInsteadOfDdp, SilentOnFixtures) {
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_train.json.gz").string(), kId), kId).empty());
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("ddp2_rank0.json.gz").string(), kId), kId).empty());
}

TEST(DpInsteadOfDdp, SilentOnRealMultiGpuAndDdpTraces) {
  // One process per GPU (nsys capture of two ranks; the importer correlates 11 of rank 1's kernels
  // to rank 0's calls, which must not make rank 0 look like a multi-GPU process) and DDP traces.
  for (const char* rel : {"nsys/nsys2026_h100_2gpu_1s.sqlite", "kineto/tracelens_mi300_resnet_act_checkpoint.json.gz",
                          "kineto/hta_sampled_rank-0.json.gz"}) {
    REALDATA_OR_SKIP(path, rel);
    EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty()) << rel;
  }
}
