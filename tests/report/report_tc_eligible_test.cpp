// tests/report/report_tc_eligible_test.cpp — Tensor Core eligibility is counted once, at the
// outermost eligible op, in the store, `proflint summary` and every DLProf-style report (issue 21:
// a convolution counted four times — conv2d › convolution › _convolution › cudnn_convolution).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "engine/pipeline/load.hpp"
#include "engine/analysis/summary.hpp"
#include "engine/derive/derive.hpp"
#include "engine/store/writer.hpp"
#include "tests/report/report_support.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint;
using namespace proflint::testing;

namespace {

// The three views a user compares: `proflint summary`, the report summary's "Op eligible for TC but
// not using" row and the tensor report (rows not using TC, and all rows).
struct EligibleFigures {
  int64_t ops = 0, gpu_ns = 0, ops_no_tc = 0, no_tc_gpu_ns = 0;
};

EligibleFigures from_summary(Store& store) {
  EligibleFigures f;
  for (const auto& t : summarize(store)) {
    f.ops += t.tc_eligible_ops;
    f.gpu_ns += t.tc_eligible_gpu_ns;
    f.ops_no_tc += t.tc_eligible_ops_no_tc;
    f.no_tc_gpu_ns += t.tc_eligible_no_tc_gpu_ns;
  }
  return f;
}

EligibleFigures from_tensor_report(Built& b) {
  auto t = report_of(b, "tensor").tables[0];
  size_t uses = column_index(t, "Uses TC"), total = column_index(t, "Total GPU Time (ns)");
  EligibleFigures f;
  for (const auto& row : t.rows) {
    ++f.ops;
    f.gpu_ns += int_cell(row[total]);
    if (!std::get<bool>(row[uses])) {
      ++f.ops_no_tc;
      f.no_tc_gpu_ns += int_cell(row[total]);
    }
  }
  return f;
}

void expect_views_agree(Built& b, int64_t ops, int64_t gpu_ns, int64_t ops_no_tc, int64_t no_tc_gpu_ns) {
  auto s = from_summary(b.store);
  EXPECT_EQ(s.ops, ops);
  EXPECT_EQ(s.gpu_ns, gpu_ns);
  EXPECT_EQ(s.ops_no_tc, ops_no_tc);
  EXPECT_EQ(s.no_tc_gpu_ns, no_tc_gpu_ns);
  auto t = from_tensor_report(b);
  EXPECT_EQ(t.ops, ops);
  EXPECT_EQ(t.gpu_ns, gpu_ns);
  EXPECT_EQ(t.ops_no_tc, ops_no_tc);
  EXPECT_EQ(t.no_tc_gpu_ns, no_tc_gpu_ns);
  auto summary = report_of(b, "summary");
  EXPECT_EQ(int_cell(summary_value(summary, "All Ops", "Op eligible for TC but not using", "# Ops")), ops_no_tc);
  EXPECT_EQ(int_cell(summary_value(summary, "All Ops", "Op eligible for TC but not using", "GPU Time (ns)")),
            no_tc_gpu_ns);
  // The classes still add up to the first row.
  int64_t parts = 0, nodes = 0;
  for (const char* row : {"Ops Using TC", "Op eligible for TC but not using", "All other ops"}) {
    parts += int_cell(summary_value(summary, "All Ops", row, "GPU Time (ns)"));
    nodes += int_cell(summary_value(summary, "All Ops", row, "# Ops"));
  }
  EXPECT_EQ(parts, int_cell(summary_value(summary, "All Ops", "All Op", "GPU Time (ns)")));
  EXPECT_EQ(nodes, int_cell(summary_value(summary, "All Ops", "All Op", "# Ops")));
  // The store says the same to Lua rules and the gate.
  EXPECT_EQ(sql_int(b.store, "SELECT COALESCE(SUM(gpu_time_ns), 0) FROM op WHERE tc_eligible = 1"), gpu_ns);
  EXPECT_EQ(sql_int(b.store, "SELECT COALESCE(SUM(dur_ns), 0) FROM kernel WHERE tc_eligible_op_id IS NOT NULL"),
            gpu_ns);
}

}  // namespace

// ProfilerStep#1 › MyBlock › aten::conv2d › aten::convolution › aten::_convolution › {aten::cudnn_convolution
// (two kernels), aten::add_ (bias, one kernel)}; then aten::relu (one kernel) outside any eligible op.
// Expected by hand: one eligible op (aten::conv2d) carrying its sub-tree's 400 + 50 + 30 = 480 ns.
TEST(TcEligibleCountedOnce, ConvolutionChainIsOneEligibleOpWithTheSubtreeTime) {
  Store store = Store::create_in_memory();
  {
    TraceInfo info;
    info.path = "conv_chain.json";
    info.format = "kineto";
    StoreWriter w(store, info);
    DeviceRow dev;
    dev.device_id = 0;
    dev.name = "Tesla V100-SXM2-16GB";
    dev.compute_major = 7;
    dev.compute_minor = 0;
    w.add_device(dev);
    auto range = [&](int64_t start, int64_t dur, const char* name, const char* kind = "cpu_op",
                     std::optional<std::string> types = {}) {
      RangeRow r;
      r.pid = 1;
      r.tid = 1;
      r.start_ns = start;
      r.dur_ns = dur;
      r.name = name;
      r.kind = kind;
      r.input_types = std::move(types);
      w.add_range(r);
    };
    auto launch = [&](int64_t api_start, int64_t corr, int64_t start, int64_t dur, const char* kernel) {
      ApiCallRow a;
      a.pid = 1;
      a.tid = 1;
      a.start_ns = api_start;
      a.dur_ns = 5;
      a.name = "cudaLaunchKernel";
      a.correlation_id = corr;
      w.add_api_call(a);
      KernelRow k;
      k.device_id = 0;
      k.stream_id = 7;
      k.start_ns = start;
      k.dur_ns = dur;
      k.name = kernel;
      k.correlation_id = corr;
      w.add_kernel(k);
    };
    const std::string fp32 = R"(["float","float","float"])";
    range(0, 10000, "ProfilerStep#1", "user_annotation");
    range(50, 2100, "MyBlock");
    range(100, 2000, "aten::conv2d", "cpu_op", fp32);
    range(110, 1890, "aten::convolution", "cpu_op", fp32);
    range(120, 1780, "aten::_convolution", "cpu_op", fp32);
    range(130, 1370, "aten::cudnn_convolution", "cpu_op", fp32);
    launch(200, 1, 3000, 400, "implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false, true, true>");
    launch(300, 2, 3500, 50, "cask_cudnn::computeOffsetsKernel(cask_cudnn::ComputeOffsetsParams)");
    range(1600, 100, "aten::add_", "cpu_op", fp32);
    launch(1650, 3, 3600, 30, "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>");
    range(2160, 100, "aten::relu", "cpu_op", R"(["float"])");
    launch(2170, 4, 3700, 20, "void at::native::vectorized_elementwise_kernel<4, at::native::relu_kernel>");
    w.commit();
  }
  derive_all(store, DeriveOptions{});

  // The store: only the outermost op is eligible; every kernel under it points at it.
  EXPECT_EQ(sql_int(store, "SELECT COUNT(*) FROM op WHERE tc_eligible = 1"), 1);
  int64_t conv2d = sql_int(store, "SELECT id FROM op WHERE name = 'aten::conv2d'");
  EXPECT_EQ(sql_int(store, "SELECT id FROM op WHERE tc_eligible = 1"), conv2d);
  EXPECT_EQ(sql_int(store, "SELECT gpu_time_ns FROM op WHERE tc_eligible = 1"), 480);
  for (const char* inner : {"aten::convolution", "aten::_convolution", "aten::cudnn_convolution"})
    EXPECT_EQ(sql_int(store, std::string("SELECT tc_eligible FROM op WHERE name = '") + inner + "'"), 0) << inner;
  EXPECT_EQ(sql_int(store, "SELECT COUNT(*) FROM kernel WHERE tc_eligible_op_id = " + std::to_string(conv2d)), 3);
  EXPECT_EQ(sql_int(store, "SELECT COUNT(*) FROM kernel WHERE tc_eligible_op_id IS NULL"), 1);  // relu

  Built b{std::move(store), {}};
  b.model = dlprof::load_model(b.store);
  expect_views_agree(b, /*ops=*/1, /*gpu_ns=*/480, /*ops_no_tc=*/1, /*no_tc_gpu_ns=*/480);
  // `proflint summary`'s "eligible, no TC": only the GEMM/conv-category kernels under the eligible op
  // (the convolution and cuDNN's offsets kernel, 400 + 50), not the bias add, which could not use
  // Tensor Cores anyway.
  auto traces = summarize(b.store);
  ASSERT_EQ(traces.size(), 1u);
  ASSERT_EQ(traces[0].devices.size(), 1u);
  EXPECT_EQ(traces[0].devices[0].tc_eligible_not_used_ns, 450);

  auto tensor = report_of(b, "tensor").tables[0];
  ASSERT_EQ(tensor.rows.size(), 1u);
  EXPECT_EQ(text_cell(tensor.rows[0][column_index(tensor, "Op Name")]), "/MyBlock/aten::conv2d");
  EXPECT_EQ(int_cell(tensor.rows[0][column_index(tensor, "Non-TC Kernel Count")]), 3);
  // op_type: conv2d is the eligible type here; the types nested inside it are not eligible ops.
  auto op_type = report_of(b, "op_type").tables[0];
  std::map<std::string, bool> eligible_type;
  for (const auto& row : op_type.rows)
    eligible_type[text_cell(row[column_index(op_type, "Op Name")])] =
        std::get<bool>(row[column_index(op_type, "TC Eligibility")]);
  EXPECT_TRUE(eligible_type["conv2d"]);
  EXPECT_FALSE(eligible_type["convolution"]);
  EXPECT_FALSE(eligible_type["cudnn_convolution"]);
  // group_node: MyBlock holds one eligible op (not the four eligible types of the chain).
  auto groups = report_of(b, "group_node").tables[0];
  bool found = false;
  for (const auto& row : groups.rows) {
    if (text_cell(row[0]) != "/MyBlock") continue;
    found = true;
    EXPECT_EQ(int_cell(row[column_index(groups, "No. TC Eligibility Ops")]), 1);
    EXPECT_EQ(int_cell(row[column_index(groups, "No. Node Ops Using TC")]), 0);
  }
  EXPECT_TRUE(found) << "no /MyBlock group node";
  // The eligible op is a group node itself and counts on its own row (it counted only on the rows
  // above it before); the eligible types nested inside it are part of it and count nowhere.
  std::map<std::string, int64_t> eligible_on;
  for (const auto& row : groups.rows)
    eligible_on[text_cell(row[0])] = int_cell(row[column_index(groups, "No. TC Eligibility Ops")]);
  ASSERT_TRUE(eligible_on.count("/MyBlock/aten::conv2d")) << "no aten::conv2d group node";
  EXPECT_EQ(eligible_on.at("/MyBlock/aten::conv2d"), 1);
  int inner_rows = 0;
  for (const auto& [name, n] : eligible_on)
    if (name.ends_with("aten::convolution") || name.ends_with("aten::_convolution")) {
      ++inner_rows;
      EXPECT_EQ(n, 0) << name;
    }
  EXPECT_EQ(inner_rows, 2);
}

// Real profiles: the three views agree with each other and with figures computed by hand from the
// raw events with python3 (kernel -> launching runtime call by correlation id -> enclosing CPU ops /
// NVTX ranges on the launching thread -> the outermost op of an eligible type and dtype; sum the
// kernels under it): scripts/tc_eligible_kineto.py and scripts/tc_eligible_nsys.py.
TEST(TcEligibleCountedOnce, ResNet50KinetoViewsAgreeWithTheRawEvents) {
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz");
  Built b = load_for_reports(path);
  // By hand: 108 outermost eligible ops per ProfilerStep (53 aten::conv2d, 1 aten::linear, 53
  // CudnnConvolutionBackward0, 1 AddmmBackward0), the same in all 6 steps, so 108 op nodes; their
  // kernels sum to 399,991 µs. FP32 on a V100: none uses Tensor Cores.
  expect_views_agree(b, 108, 399991000, 108, 399991000);
}

TEST(TcEligibleCountedOnce, H100NsysViewsAgreeWithTheRawEvents) {
  REALDATA_OR_SKIP(path, "nsys/nsys2026_h100_2gpu_1s.sqlite");
  Built b = load_for_reports(path);
  // By hand: each of the two rank processes has 194 outermost eligible emit_nvtx ranges (388 op
  // instances; the same model code, so the same 194 op nodes in both ranks); 184 of them launched
  // kernels (132 aten::linear, 52 aten::einsum; the aten::matmul/mm/bmm inside them are not counted
  // again), which sum to 20,156,596 ns (10,062,033 on GPU 0, 10,094,563 on GPU 1). FP32 ffma GEMMs:
  // none uses Tensor Cores.
  EXPECT_EQ(sql_int(b.store, "SELECT COUNT(*) FROM op WHERE tc_eligible = 1"), 388);
  EXPECT_EQ(sql_int(b.store, "SELECT COUNT(*) FROM op WHERE tc_eligible = 1 AND gpu_time_ns > 0"), 184);
  expect_views_agree(b, 194, 20156596, 194, 20156596);
}
