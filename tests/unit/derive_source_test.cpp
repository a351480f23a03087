// tests/unit/derive_source_test.cpp — source and module attribution (engine/derive/source.hpp,
// schema/0008_source.sql): frame parsing, the library filter, 'Call stack' order, the derived rows
// of the generated with_stack/with_modules fixtures, and real traces that record Python frames.
//
// Expected values were read off the raw events by hand (python3 over the JSON), as noted per test.
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/analysis/facts.hpp"
#include "engine/analysis/source_sites.hpp"
#include "engine/analysis/summary.hpp"
#include "engine/derive/correlation.hpp"
#include "engine/derive/model.hpp"
#include "engine/derive/ops.hpp"
#include "engine/derive/source.hpp"
#include "engine/import/nsys/nsys_decode.hpp"
#include "engine/pipeline/load.hpp"
#include <nlohmann/json.hpp>

#include "tests/support/realdata.hpp"
#include "tests/support/run.hpp"

namespace proflint {
namespace {

using Strings = std::vector<std::string>;

TEST(SourceFrames, ParsesPythonFunctionNames) {
  auto f = parse_py_frame("train.py(84): log_metrics");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->file, "train.py");
  EXPECT_EQ(f->line, 84);
  EXPECT_EQ(f->function, "log_metrics");
  auto g = parse_py_frame("<frozen os>(709): getenv");  // the file itself has no digits in parentheses
  ASSERT_TRUE(g);
  EXPECT_EQ(g->file, "<frozen os>");
  EXPECT_EQ(g->line, 709);
  auto h = parse_py_frame("/home/u/lib/python3.7/site-packages/torch/optim/sgd.py(117): step");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->file, "/home/u/lib/python3.7/site-packages/torch/optim/sgd.py");
  EXPECT_EQ(h->function, "step");
  auto lc = parse_py_frame("cudagraph_mwe.py(8): <listcomp>");
  ASSERT_TRUE(lc);
  EXPECT_EQ(lc->function, "<listcomp>");
  EXPECT_FALSE(parse_py_frame("<built-in method item of Tensor object at 0x7f3a2c1b4e00>"));
  EXPECT_FALSE(parse_py_frame("nn.Module: Net_0"));
  EXPECT_FALSE(parse_py_frame("train.py(x): f"));
  EXPECT_FALSE(parse_py_frame("train.py(3): "));
  EXPECT_EQ(module_frame_name("nn.Module: BertLayer_3").value_or(""), "BertLayer_3");
  EXPECT_FALSE(module_frame_name("nn.Module: "));
  EXPECT_FALSE(module_frame_name("train.py(1): nn"));
}

TEST(SourceFrames, TellsLibraryFromUserCode) {
  FrameFilter f;
  // PyTorch 2 writes files relative to their sys.path entry (as in tracelens_h100_bert_small).
  EXPECT_TRUE(f.is_library("torch/nn/modules/linear.py"));
  EXPECT_TRUE(f.is_library("threading.py"));
  EXPECT_TRUE(f.is_library("multiprocessing/spawn.py"));
  EXPECT_TRUE(f.is_library("<string>"));
  EXPECT_TRUE(f.is_library("<frozen os>"));
  EXPECT_FALSE(f.is_library("train.py"));
  EXPECT_FALSE(f.is_library("moca/application/profile/profile_model.py"));
  EXPECT_FALSE(f.is_library("transformers/models/bert/modeling_bert.py"));  // not skipped unless configured
  // Absolute paths of the legacy 'Call stack' (tb_resnet50_v100_workers0).
  EXPECT_TRUE(f.is_library("/home/yangu/anaconda3/envs/kineto/lib/python3.7/site-packages/torch/optim/sgd.py"));
  EXPECT_TRUE(f.is_library("/usr/lib/python3.10/threading.py"));
  EXPECT_FALSE(f.is_library("/home/yangu/proj/resnet50_profiler_api.py"));
  // gpupuzzlers_cudagraph_mwe writes installed files from their site-packages directory on.
  EXPECT_TRUE(f.is_library("site-packages/torch/cuda/graphs.py"));
  EXPECT_TRUE(f.is_library("lib/python3.10/json/decoder.py"));
  EXPECT_FALSE(f.is_library("libs/python_utils/train.py"));
  FrameFilter configured({"transformers"}, {"numpy"});
  EXPECT_TRUE(configured.is_library("transformers/models/bert/modeling_bert.py"));
  EXPECT_FALSE(configured.is_library("numpy/core/fromnumeric.py"));
  EXPECT_TRUE(configured.is_library("torch/nn/modules/linear.py"));
}

TEST(SourceFrames, OrdersCallStacksInnermostFirst) {
  // Legacy profiler (tb_resnet50_v100_workers0): innermost first, '<module>' last: kept.
  auto legacy = call_stack_frames("/x/torch/optim/optimizer.py(216): zero_grad;resnet50_profiler_api.py(49): <module>");
  ASSERT_EQ(legacy.size(), 2u);
  EXPECT_EQ(legacy[0], "/x/torch/optim/optimizer.py(216): zero_grad");
  // Later Kineto (gpupuzzlers_cudagraph_mwe): outermost first, the built-in last: reversed.
  auto kineto = call_stack_frames(
      "cudagraph_mwe.py(6): do_work;cudagraph_mwe.py(8): <listcomp>;<built-in method zeros of type object at 0x7f>;");
  ASSERT_EQ(kineto.size(), 3u);
  EXPECT_EQ(kineto[0], "<built-in method zeros of type object at 0x7f>");
  EXPECT_EQ(kineto[1], "cudagraph_mwe.py(8): <listcomp>");
  EXPECT_EQ(kineto[2], "cudagraph_mwe.py(6): do_work");
  EXPECT_TRUE(call_stack_frames("").empty());
  EXPECT_EQ(call_stack_frames("a.py(1): f").size(), 1u);
}

// nsys exports of emit_nvtx(record_shapes=True) name ops 'aten::conv2d, seq = 12, op_id = 5, sizes
// = [[…]]': the importer keeps the sequence number and the shapes (as Kineto's 'Input Dims').
TEST(SourceNsys, EmitNvtxArguments) {
  auto a = nsys::emit_nvtx_args("aten::conv2d, seq = 12, op_id = 5, sizes = [[32, 3, 224, 224], [64, 3, 7, 7], []]");
  EXPECT_EQ(a.seq.value_or(-1), 12);
  EXPECT_EQ(a.sizes.value_or(""), "[[32, 3, 224, 224], [64, 3, 7, 7], []]");
  auto b = nsys::emit_nvtx_args("aten::view, op_id = 314290");  // as in nsys2026_h100_2gpu_1s: no seq, no sizes
  EXPECT_FALSE(b.seq);
  EXPECT_FALSE(b.sizes);
  auto cut = nsys::emit_nvtx_args("aten::add, seq = 3, op_id = 9, sizes = [[2, 3], [2");  // truncated text
  EXPECT_EQ(cut.seq.value_or(-1), 3);
  EXPECT_FALSE(cut.sizes);
  EXPECT_FALSE(nsys::emit_nvtx_args("my range, sizes = [[1]]").sizes);  // not emit_nvtx text
}

// Loads a file into an in-memory store, derived.
Store load_one(const std::string& path) {
  LoadOptions options;
  return load_inputs({path}, options);
}

std::vector<std::string> column(Store& store, const std::string& sql) {
  SQLite::Statement q(store.db(), sql);
  std::vector<std::string> out;
  while (q.executeStep()) out.push_back(q.getColumn(0).isNull() ? "<null>" : q.getColumn(0).getString());
  return out;
}

int64_t number(Store& store, const std::string& sql) {
  SQLite::Statement q(store.db(), sql);
  if (!q.executeStep() || q.getColumn(0).isNull()) return -1;
  return q.getColumn(0).getInt64();
}

// fixtures/item_in_logging_with_stack.json.gz (gen_profile.py source-scenario item_in_logging): the
// 48 aten::item ops (6 per step x 8 steps) sit under '<built-in method item …>' under
// 'train.py(84): log_metrics'; the GEMMs of the forward under Net_0/Linear_k and model.py(22).
TEST(SourceDerive, ItemInLoggingFixture) {
  Store store = load_one(testing::fixture_path("item_in_logging_with_stack.json.gz").string());
  EXPECT_EQ(column(store, "SELECT DISTINCT s.site FROM op o JOIN source s ON s.op_id = o.id WHERE o.name = 'aten::item'"),
            Strings{"train.py:84 in log_metrics"});
  EXPECT_EQ(number(store, "SELECT count(*) FROM op o JOIN source s ON s.op_id = o.id WHERE o.name = 'aten::item'"), 48);
  // The op inside aten::item has the same site; its stack starts at the built-in method.
  EXPECT_EQ(column(store, "SELECT DISTINCT s.stack FROM op o JOIN source s ON s.op_id = o.id "
                          "WHERE o.name = 'aten::_local_scalar_dense'"),
            Strings{"<built-in method item of Tensor object at 0x7f3a2c1b4e00>;train.py(84): log_metrics;"
                    "train.py(101): train;train.py(130): <module>"});
  // Forward GEMMs: innermost user frame is model.py(22) forward (torch/nn frames skipped), module path Net_0/Linear_k.
  EXPECT_EQ(column(store, "SELECT DISTINCT s.site || ' | ' || s.module_path FROM op o JOIN source s ON s.op_id = o.id "
                          "WHERE o.name = 'aten::addmm' ORDER BY 1"),
            (Strings{"model.py:22 in forward | Net_0/Linear_0", "model.py:22 in forward | Net_0/Linear_1"}));
  // The backward GEMM runs under torch/_tensor.py: the user frame is train_step, no module.
  EXPECT_EQ(column(store, "SELECT DISTINCT coalesce(s.site, '-') || ' | ' || coalesce(s.module_path, '-') FROM op o "
                          "JOIN source s ON s.op_id = o.id WHERE o.name = 'aten::mm'"),
            Strings{"train.py:60 in train_step | -"});
  // The stream syncs are inside ops: no API-call rows.
  EXPECT_EQ(number(store, "SELECT count(*) FROM _source WHERE api_call_id IS NOT NULL"), 0);
}

// The ops' sites roll up into findings' locations: 48 read-backs, 6 per step, each blocking 290 us
// of cudaStreamSynchronize (the time the test adds per call here).
TEST(SourceDerive, SourceSitesGroupByPlace) {
  Store store = load_one(testing::fixture_path("item_in_logging_with_stack.json.gz").string());
  Facts facts(store, summarize(store));
  SourceSites sites(facts, 1, "host blocked");
  ASSERT_TRUE(sites.available());
  SQLite::Statement q(store.db(), "SELECT id, dur_ns FROM api_call WHERE name = 'cudaStreamSynchronize' ORDER BY id");
  int64_t n = 0;
  while (q.executeStep()) {
    sites.add_api_call(q.getColumn(0).getInt64(), q.getColumn(1).getInt64());
    ++n;
  }
  EXPECT_EQ(n, 48);
  auto top = sites.top(5);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].file, "train.py");
  EXPECT_EQ(top[0].line, 84);
  EXPECT_EQ(top[0].function, "log_metrics");
  EXPECT_EQ(top[0].what, "aten::item");  // the outermost op at the place, not _local_scalar_dense
  EXPECT_EQ(top[0].count, 48);
  EXPECT_EQ(top[0].time_ns, 48 * 290'000);
  EXPECT_EQ(top[0].iterations, 8);
  EXPECT_EQ(location_text(top[0]), "aten::item at train.py:84 in log_metrics, 6× per step, host blocked 1.74 ms per step");
}

// fixtures/slow_module_with_modules.json.gz: eight Linear modules in four blocks; Linear_5 (Block_2)
// runs a 6 ms FP32 GEMM per step, the others 0.3 ms BF16 Tensor Core GEMMs; 6 steps.
// Kernel time = 6 x (6 + 7 x 0.3) ms = 48.6 ms.
TEST(SourceDerive, ModuleViewOfSlowModuleFixture) {
  Store store = load_one(testing::fixture_path("slow_module_with_modules.json.gz").string());
  auto modules = summarize_modules(store.db(), 1);
  ASSERT_FALSE(modules.empty());
  EXPECT_EQ(modules[0].path, "Encoder_0");
  EXPECT_EQ(modules[0].gpu_time_ns, 48'600'000);
  EXPECT_NEAR(modules[0].share_of_kernel_time, 1.0, 1e-9);
  EXPECT_NEAR(modules[0].tensor_core_share, 12.6 / 48.6, 1e-9);
  // Tree order: Block_2 (the heaviest block) right after Encoder_0, then its Linear_5.
  ASSERT_GE(modules.size(), 3u);
  EXPECT_EQ(modules[1].path, "Encoder_0/Block_2");
  EXPECT_EQ(modules[1].gpu_time_ns, 6 * 6'300'000);
  EXPECT_EQ(modules[2].path, "Encoder_0/Block_2/Linear_5");
  EXPECT_EQ(modules[2].gpu_time_ns, 36'000'000);
  EXPECT_EQ(modules[2].self_gpu_time_ns, 36'000'000);
  EXPECT_EQ(modules[2].tensor_core_time_ns, 0);
  EXPECT_EQ(modules[2].kernel_count, 6);
  EXPECT_EQ(modules.size(), 1u + 4u + 8u);
}

// tracelens_h100_bert_small records python_function events and nn.Module frames. By hand (python3
// over the events): the first aten::linear sits under nn.Module frames
// BertLMHeadModel_0 > BertModel_0 > BertEmbeddings_0 ... and its innermost non-library frame is a
// transformers/ file (relative path, not in the skip list).
TEST(SourceRealData, BertSmallHasModulePathsAndUserFrames) {
  REALDATA_OR_SKIP(path, "kineto/tracelens_h100_bert_small.json.gz");
  Store store = load_one(path);
  EXPECT_GT(number(store, "SELECT count(*) FROM _source WHERE op_id IS NOT NULL AND origin = 'python_function'"), 0);
  auto paths = column(store, "SELECT DISTINCT module_path FROM source WHERE module_path LIKE '%BertLayer_3%' ORDER BY 1 LIMIT 1");
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(paths[0].rfind("BertLMHeadModel_0/BertModel_0/BertEncoder_0/BertLayer_3", 0), 0u) << paths[0];
  // No site is a library frame.
  for (const auto& file : column(store, "SELECT DISTINCT file FROM source WHERE file IS NOT NULL")) {
    EXPECT_EQ(file.rfind("torch/", 0), std::string::npos) << file;
    EXPECT_NE(file.front(), '<') << file;
  }
}

// The finding names the line to change. Checked by hand on the raw events (python3): the one
// aten::linear inside 'nn.Module: Linear_25' has Input Dims [[1, 141, 512], [30522, 512], [30522]]
// (30522 is no multiple of 8) and its enclosing python_function events, innermost first, are
// '<built-in function linear>', 'torch/nn/modules/linear.py(124): forward', module.py _call_impl,
// 'nn.Module: Linear_25', 'transformers/models/bert/modeling_bert.py(786): forward',
// 'nn.Module: BertLMPredictionHead_0', …, 'nn.Module: BertOnlyMLMHead_0', …, 'nn.Module: BertLMHeadModel_0'.
TEST(SourceRealData, BertSmallTensorCoreShapeNamesTheLmHead) {
  REALDATA_OR_SKIP(path, "kineto/tracelens_h100_bert_small.json.gz");
  auto r = testing::run_proflint("analyze --only tensor-core-shape --format json " + testing::shell_quote(path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["findings"].size(), 1u);
  const auto& locations = doc["findings"][0]["locations"];
  ASSERT_EQ(locations.size(), 1u);
  EXPECT_EQ(locations[0]["file"], "transformers/models/bert/modeling_bert.py");
  EXPECT_EQ(locations[0]["line"], 786);
  EXPECT_EQ(locations[0]["function"], "forward");
  EXPECT_EQ(locations[0]["module_path"], "BertLMHeadModel_0/BertOnlyMLMHead_0/BertLMPredictionHead_0/Linear_25");
  EXPECT_EQ(locations[0]["what"], "aten::linear");
  EXPECT_EQ(locations[0]["count"], 1);
  EXPECT_NE(doc["findings"][0]["problem"].get<std::string>().find(
                "Where: aten::linear at transformers/models/bert/modeling_bert.py:786 in forward (module "
                "BertLMHeadModel_0/BertOnlyMLMHead_0/BertLMPredictionHead_0/Linear_25)"),
            std::string::npos);
}

// gpupuzzlers_cudagraph_mwe records both python_function events and the 'Call stack' argument;
// its aten::zeros ops at cudagraph_mwe.py line 8 (<listcomp>) — the argument reads
// 'cudagraph_mwe.py(6): do_work;cudagraph_mwe.py(8): <listcomp>;<built-in method zeros …>'.
TEST(SourceRealData, CudagraphMweNamesTheScript) {
  REALDATA_OR_SKIP(path, "kineto/gpupuzzlers_cudagraph_mwe.json.gz");
  Store store = load_one(path);
  auto files = column(store, "SELECT DISTINCT file FROM source WHERE file IS NOT NULL ORDER BY 1");
  ASSERT_FALSE(files.empty());
  EXPECT_EQ(files, Strings{"cudagraph_mwe.py"});
}

// tb_resnet50_v100_workers0 has only the legacy 'Call stack' argument (absolute paths, innermost
// first): the optimizer's ops are attributed to resnet50_profiler_api.py line 51 (<module>), the
// frame after four site-packages/torch frames.
TEST(SourceRealData, LegacyCallStackResnet50) {
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz");
  Store store = load_one(path);
  EXPECT_EQ(number(store, "SELECT count(*) FROM _source WHERE origin = 'python_function'"), 0);
  auto sites = column(store, "SELECT DISTINCT site FROM source WHERE stack LIKE '%sgd.py(117): step%' ORDER BY 1");
  EXPECT_EQ(sites, Strings{"resnet50_profiler_api.py:51 in <module>"});
  // The six DataLoader fetches: the first op inside each has the Call stack
  // '…/torchvision/…;…;resnet50_profiler_api.py(42): <module>' (python3 over the events: 6 of 6).
  EXPECT_EQ(column(store, "SELECT DISTINCT s.site FROM range r JOIN source s ON s.range_id = r.id "
                          "WHERE r.name LIKE 'enumerate(DataLoader)%'"),
            Strings{"resnet50_profiler_api.py:42 in <module>"});
  EXPECT_EQ(number(store, "SELECT count(*) FROM _source WHERE range_id IS NOT NULL"), 6);
}

// Backward ops (schema/0012): a hand-laid Kineto trace. Main thread 1: 'model.py(42): forward'
// around aten::broadcast_tensors (20-30 us, seq 7) and aten::linear (40-100 us, seq 7) holding
// aten::addmm (45-95 us, seq 7). Autograd thread 2, no Python frames: evaluate_function:
// AddmmBackward0 (500-600 us, seq 7, Fwd thread id 1) > AddmmBackward0 > aten::mm (510-550 us, no
// seq) launching a 30 us kernel; and a MulBackward0 (700-720 us, seq 99) whose forward op is not in
// the trace. The forward op of seq 7 is the last outermost one, aten::linear (not broadcast_tensors
// before it, not the addmm inside it).
TEST(SourceDerive, BackwardOpsTakeTheirForwardOpsPlace) {
  nlohmann::json ev = nlohmann::json::array();
  auto x = [&](const char* cat, const char* name, double ts, double dur, int tid, nlohmann::json args) {
    nlohmann::json e = {{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", 1}, {"tid", tid}, {"ts", ts}, {"dur", dur}};
    if (!args.is_null()) e["args"] = args;
    ev.push_back(e);
  };
  auto seq = [](int s, int fwd) { return nlohmann::json{{"Sequence number", s}, {"Fwd thread id", fwd}}; };
  x("python_function", "train.py(10): <module>", 0, 1000, 1, nullptr);
  x("python_function", "model.py(42): forward", 10, 200, 1, nullptr);
  x("cpu_op", "aten::broadcast_tensors", 20, 10, 1, seq(7, 0));
  x("cpu_op", "aten::linear", 40, 60, 1, seq(7, 0));
  x("cpu_op", "aten::addmm", 45, 50, 1, seq(7, 0));
  x("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", 500, 100, 2, seq(7, 1));
  x("cpu_op", "AddmmBackward0", 505, 90, 2, seq(7, 1));
  x("cpu_op", "aten::mm", 510, 40, 2, {{"External id", 50}});
  x("cuda_runtime", "cudaLaunchKernel", 520, 10, 2, {{"correlation", 9}, {"External id", 50}});
  x("kernel", "gemm_kernel", 560, 30, 7, {{"device", 0}, {"stream", 7}, {"correlation", 9}, {"External id", 50}});
  ev.back()["pid"] = 0;
  x("cpu_op", "MulBackward0", 700, 20, 2, seq(99, 1));
  nlohmann::json doc = {{"schemaVersion", 1}, {"traceEvents", ev}};
  auto path = (std::filesystem::path(::testing::TempDir()) / "proflint_backward_source.json").string();
  {
    std::ofstream out(path);
    out << doc.dump();
  }
  Store store = load_one(path);
  EXPECT_EQ(column(store, "SELECT o.name || ' | ' || s.origin || ' | ' || s.site || ' | ' || fo.name FROM op o "
                          "JOIN source s ON s.op_id = o.id JOIN op fo ON fo.id = s.forward_op_id ORDER BY o.start_ns, o.depth"),
            (Strings{"autograd::engine::evaluate_function: AddmmBackward0 | forward_op | model.py:42 in forward | aten::linear",
                     "AddmmBackward0 | forward_op | model.py:42 in forward | aten::linear",
                     "aten::mm | forward_op | model.py:42 in forward | aten::linear"}));
  EXPECT_EQ(number(store, "SELECT count(*) FROM op o JOIN source s ON s.op_id = o.id WHERE o.name = 'MulBackward0'"), 0);
  // The kernel of aten::mm is placed at the forward line, named as the backward of aten::linear.
  Facts facts(store, summarize(store));
  SourceSites sites(facts, 1, "GPU time");
  sites.add_kernel(number(store, "SELECT id FROM kernel WHERE name = 'gemm_kernel'"), 30'000);
  auto top = sites.top(3);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].what, "backward of aten::linear");
  EXPECT_EQ(location_text(top[0]).substr(0, 51), "backward of aten::linear at model.py:42 in forward,");
  std::filesystem::remove(path);
}

// attribute_sources reserves its rows from a bound (one per op, DataLoader fetch and API call
// outside any op) instead of growing the vector. Here every op, the fetch and the lone API call
// get a row, so the bound is exactly met: the rows must all be there, in order, without the vector
// having grown past the bound.
TEST(SourceDerive, RowsFillTheReservedBoundExactly) {
  TraceData t;
  auto range = [&](RangeKind kind, const char* name, int64_t start, int64_t end) {
    RangeRec r;
    r.id = static_cast<int64_t>(t.ranges.size());
    r.pid = 1;
    r.tid = 1;
    r.start = start;
    r.end = end;
    r.name_id = t.intern(name);
    r.kind = kind;
    t.ranges.push_back(r);
    t.own_range_facts.emplace_back();  // no call stack, module or sequence number
  };
  range(RangeKind::python_function, "train.py(10): step", 0, 100);
  range(RangeKind::cpu_op, "aten::mm", 10, 20);
  range(RangeKind::cpu_op, "aten::add", 30, 40);
  range(RangeKind::cpu_op, "aten::relu", 42, 45);
  range(RangeKind::user_annotation, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 50, 60);
  ApiRec a;
  a.pid = 1;
  a.tid = 1;
  a.start = 70;
  a.end = 75;
  a.name_id = t.intern("cudaLaunchKernel");
  t.apis.push_back(a);
  nest_ranges(t);
  classify_ranges(t);
  build_ops(t);
  attribute_api_to_ops(t);
  attribute_sources(t);
  ASSERT_EQ(t.ops.size(), 3u);
  ASSERT_EQ(t.sources.size(), 5u);  // 3 ops + 1 fetch + 1 API call: the bound
  EXPECT_EQ(t.sources.capacity(), t.sources.size());  // grown by doubling it would be 8
  const int64_t file = t.intern("train.py"), function = t.intern("step");
  for (size_t k = 0; k < t.sources.size(); ++k) {
    const SourceFact& s = t.sources[k];
    EXPECT_EQ(s.origin, "python_function") << k;
    EXPECT_EQ(s.file_id, file) << k;
    EXPECT_EQ(s.line, 10) << k;
    EXPECT_EQ(s.function_id, function) << k;
  }
  EXPECT_EQ(t.sources[0].op, 0);
  EXPECT_EQ(t.sources[1].op, 1);
  EXPECT_EQ(t.sources[2].op, 2);
  EXPECT_EQ(t.sources[3].range, 4);  // the fetch, by its model position
  EXPECT_EQ(t.sources[4].api, 0);
}

// tracelens_mi300_resnet_act_checkpoint: python3 over the JSON found 426 backward ops on the
// autograd thread 639 ('Fwd thread id' 1, no python_function around any of them), each with a
// 'Sequence number' that forward ops of thread 542 carry. Seq 1198: AddmmBackward0 and its
// evaluate_function wrapper; the forward op is aten::addmm, under the frames ... nn.Module:
// Linear_0 < ResNet_0 < DistributedDataParallel_0 < train_ddp.py(82): train_step (the frames
// above it are torch/ and torchvision/ library code). Seq 1125: ConvolutionBackward0 <- aten::conv2d
// (aten::convolution inside it shares the number).
TEST(SourceRealData, CheckpointedResnetBackwardOpsAreAtTheirForwardLines) {
  REALDATA_OR_SKIP(path, "kineto/tracelens_mi300_resnet_act_checkpoint.json.gz");
  Store store = load_one(path);
  EXPECT_EQ(number(store, "SELECT count(*) FROM op o JOIN range r ON r.id = o.range_id JOIN source s ON s.op_id = o.id "
                          "WHERE r.fwd_thread_id > 0 AND s.origin = 'forward_op'"),
            426);
  EXPECT_EQ(column(store, "SELECT DISTINCT s.site || ' | ' || s.module_path || ' | ' || fo.name FROM op o "
                          "JOIN source s ON s.op_id = o.id JOIN op fo ON fo.id = s.forward_op_id WHERE o.name = 'AddmmBackward0'"),
            Strings{"train_ddp.py:82 in train_step | DistributedDataParallel_0/ResNet_0/Linear_0 | aten::addmm"});
  EXPECT_EQ(column(store, "SELECT DISTINCT fo.name FROM op o JOIN range r ON r.id = o.range_id JOIN source s ON s.op_id = o.id "
                          "JOIN op fo ON fo.id = s.forward_op_id WHERE o.name = 'ConvolutionBackward0' AND r.sequence_number = 1125"),
            Strings{"aten::conv2d"});
}

}  // namespace
}  // namespace proflint
