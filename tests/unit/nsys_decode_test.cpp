// tests/unit/nsys_decode_test.cpp — the pure decoding rules of Nsight Systems exports.
#include <gtest/gtest.h>

#include "engine/import/nsys/nsys_decode.hpp"

namespace proflint::nsys {
namespace {

TEST(NsysDecode, GlobalTidSplitsIntoPidAndTid) {
  // From nsys2020_cudf: globalTid 283799342685487 is pid 138543, tid 138543 on vm id 1.
  HostIds ids = decode_global_tid(283799342685487LL);
  EXPECT_EQ(ids.pid, 138543);
  EXPECT_EQ(ids.tid, 138543);
  EXPECT_EQ(pid_of_global_pid(283799342546944LL), 138543);
  int64_t packed = (int64_t{1} << 48) | (int64_t{0xABCDEF} << 24) | 0x123456;
  EXPECT_EQ(decode_global_tid(packed).pid, 0xABCDEF);
  EXPECT_EQ(decode_global_tid(packed).tid, 0x123456);
  // The top 16 bits (hardware / VM id) never leak into pid.
  EXPECT_EQ(decode_global_tid(static_cast<int64_t>(0xFFFF000000000000ULL) | (int64_t{7} << 24) | 9).pid, 7);
}

TEST(NsysDecode, StripsOnlyCuptiVersionSuffixes) {
  EXPECT_EQ(strip_cupti_suffix("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(strip_cupti_suffix("cudaMemcpyAsync_v3020"), "cudaMemcpyAsync");
  EXPECT_EQ(strip_cupti_suffix("cudaLaunchKernelExC_v11060"), "cudaLaunchKernelExC");
  EXPECT_EQ(strip_cupti_suffix("cudaGetDeviceProperties_v12000"), "cudaGetDeviceProperties");
  EXPECT_EQ(strip_cupti_suffix("cudaMalloc"), "cudaMalloc");
  EXPECT_EQ(strip_cupti_suffix("cuMemAlloc_v2"), "cuMemAlloc_v2");  // a real driver symbol
  EXPECT_EQ(strip_cupti_suffix("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(strip_cupti_suffix("f_v12a4"), "f_v12a4");
  EXPECT_EQ(strip_cupti_suffix("_v7000"), "_v7000");
  EXPECT_EQ(strip_cupti_suffix(""), "");
}

TEST(NsysDecode, ApiKindFromNameThenEventClass) {
  EXPECT_STREQ(api_kind("cudaLaunchKernel", std::nullopt), "runtime");
  EXPECT_STREQ(api_kind("cudaMalloc", 67), "runtime");  // 2022.2 backtrace rows
  EXPECT_STREQ(api_kind("cuLaunchKernel", 0), "driver");
  EXPECT_STREQ(api_kind("cuMemAlloc_v2", std::nullopt), "driver");
  EXPECT_STREQ(api_kind("<string 5>", 0), "runtime");
  EXPECT_STREQ(api_kind("<string 5>", 1), "driver");
  EXPECT_STREQ(api_kind("cublasSgemm", std::nullopt), "other");  // 'cu' + lower case: a library
  EXPECT_STREQ(api_kind("something", 67), "other");
}

TEST(NsysDecode, CuptiEnumValues) {
  EXPECT_STREQ(memcpy_kind_from_cupti(1), "htod");
  EXPECT_STREQ(memcpy_kind_from_cupti(2), "dtoh");
  EXPECT_STREQ(memcpy_kind_from_cupti(3), "htoa");
  EXPECT_STREQ(memcpy_kind_from_cupti(8), "dtod");
  EXPECT_STREQ(memcpy_kind_from_cupti(9), "htoh");
  EXPECT_STREQ(memcpy_kind_from_cupti(10), "ptop");
  EXPECT_STREQ(memcpy_kind_from_cupti(11), "uvm_htod");
  EXPECT_STREQ(memcpy_kind_from_cupti(13), "uvm_dtod");
  EXPECT_STREQ(memcpy_kind_from_cupti(0), "unknown");
  EXPECT_EQ(memcpy_kind_from_cupti(14), nullptr);
  EXPECT_EQ(memcpy_kind_from_cupti(-1), nullptr);
  EXPECT_STREQ(mem_kind_from_cupti(0), "pageable");
  EXPECT_STREQ(mem_kind_from_cupti(1), "pinned");
  EXPECT_STREQ(mem_kind_from_cupti(2), "device");
  EXPECT_STREQ(mem_kind_from_cupti(4), "managed");
  EXPECT_STREQ(mem_kind_from_cupti(6), "managed_static");
  EXPECT_STREQ(mem_kind_from_cupti(7), "unknown");
  EXPECT_EQ(mem_kind_from_cupti(8), nullptr);
  EXPECT_STREQ(sync_kind_from_cupti(1), "event_sync");
  EXPECT_STREQ(sync_kind_from_cupti(2), "stream_wait_event");
  EXPECT_STREQ(sync_kind_from_cupti(3), "stream_sync");
  EXPECT_STREQ(sync_kind_from_cupti(4), "context_sync");
  EXPECT_STREQ(sync_kind_from_cupti(0), "unknown");
  EXPECT_EQ(sync_kind_from_cupti(5), nullptr);
  EXPECT_STREQ(memory_op_from_cupti(0), "alloc");
  EXPECT_STREQ(memory_op_from_cupti(1), "free");
  EXPECT_EQ(memory_op_from_cupti(2), nullptr);
}

TEST(NsysDecode, EnumTableNames) {
  EXPECT_EQ(memcpy_kind_from_enum_name("CUDA_MEMCPY_KIND_HTOD"), "htod");
  EXPECT_EQ(memcpy_kind_from_enum_name("CUDA_MEMCPY_KIND_UVM_DTOH"), "uvm_dtoh");
  EXPECT_EQ(memcpy_kind_from_enum_name("CUDA_MEMCPY_KIND_UNKNOWN"), "unknown");
  EXPECT_EQ(mem_kind_from_enum_name("CUDA_MEMOPR_MEMORY_KIND_PINNED"), "pinned");
  EXPECT_EQ(mem_kind_from_enum_name("CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC"), "device_static");
  EXPECT_EQ(sync_kind_from_enum_name("CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE"), "event_sync");
  EXPECT_EQ(sync_kind_from_enum_name("CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT"), "stream_wait_event");
  EXPECT_EQ(sync_kind_from_enum_name("CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE"), "stream_sync");
  EXPECT_EQ(sync_kind_from_enum_name("CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE"), "context_sync");
  EXPECT_EQ(sync_kind_from_enum_name("CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN"), "unknown");
  EXPECT_EQ(sync_kind_from_enum_name("SOMETHING_NEW"), "unknown");
  EXPECT_EQ(memory_op_from_enum_name("CUDA_DEV_MEM_EVENT_OPR_ALLOCATION"), "alloc");
  EXPECT_EQ(memory_op_from_enum_name("CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION"), "free");
}

TEST(NsysDecode, EnumDecoderPrefersTheFilesTable) {
  EnumDecoder copy_kinds(memcpy_kind_from_cupti, memcpy_kind_from_enum_name);
  bool known = false;
  EXPECT_EQ(copy_kinds.decode(1, known), "htod");
  EXPECT_TRUE(known);
  EXPECT_EQ(copy_kinds.decode(99, known), "unknown");
  EXPECT_FALSE(known);
  EXPECT_EQ(copy_kinds.decode(-3, known), "unknown");
  EXPECT_FALSE(known);
  EXPECT_FALSE(copy_kinds.from_file());
  copy_kinds.use_file_enum({{1, "CUDA_MEMCPY_KIND_DTOH"}, {99, "CUDA_MEMCPY_KIND_FUTURE_KIND"}, {100000, "X"}});
  EXPECT_TRUE(copy_kinds.from_file());
  EXPECT_EQ(copy_kinds.decode(1, known), "dtoh");
  EXPECT_EQ(copy_kinds.decode(99, known), "future_kind");
  EXPECT_TRUE(known);
  EXPECT_EQ(copy_kinds.decode(8, known), "dtod");  // not in the file: CUPTI default
  EXPECT_EQ(copy_kinds.decode(100000, known), "unknown");
  EXPECT_FALSE(known);
}

TEST(NsysDecode, ArchHintsFromKernelNames) {
  auto h = arch_hint_from_kernel_name("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->major, 9);
  EXPECT_EQ(h->minor, 0);
  EXPECT_TRUE(h->exact);
  h = arch_hint_from_kernel_name("sm100_xmma_gemm_e4m3");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->major, 10);
  EXPECT_TRUE(h->exact);
  // sm80 kernels run on Hopper too (nsys2026_h100_2gpu_1s): a lower bound only.
  h = arch_hint_from_kernel_name("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x256x8_stage3_ffma");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->major, 8);
  EXPECT_FALSE(h->exact);
  h = arch_hint_from_kernel_name("sm86_xmma_fprop");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->minor, 6);
  h = arch_hint_from_kernel_name("nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->major, 9);
  EXPECT_FALSE(h->exact);
  h = arch_hint_from_kernel_name("ampere_sgemm_32x32_sliced1x4_tn");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->major, 8);
  h = arch_hint_from_kernel_name("turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_tn");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->major, 7);
  EXPECT_EQ(h->minor, 5);
  h = arch_hint_from_kernel_name("volta_sgemm_128x32_nt");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->major, 7);
  EXPECT_EQ(h->minor, 0);
  h = arch_hint_from_kernel_name("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(T1::Params)");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->major, 8);
  EXPECT_FALSE(h->exact);
  EXPECT_FALSE(arch_hint_from_kernel_name("void at::native::vectorized_elementwise_kernel<4>"));
  EXPECT_FALSE(arch_hint_from_kernel_name("smooth_kernel"));
  EXPECT_FALSE(arch_hint_from_kernel_name(""));
}

TEST(NsysDecode, CombinedHintsPreferExact) {
  EXPECT_FALSE(combine_arch_hints({}));
  auto c = combine_arch_hints({{8, 0, false}, {9, 0, true}, {7, 5, false}});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->major, 9);
  EXPECT_TRUE(c->exact);
  c = combine_arch_hints({{8, 0, false}, {7, 5, false}, {9, 0, false}});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->major, 9);
  EXPECT_FALSE(c->exact);
}

TEST(NsysDecode, TorchEmitNvtxTexts) {
  EXPECT_TRUE(is_torch_emit_nvtx("aten::add, op_id = 314359"));
  EXPECT_TRUE(is_torch_emit_nvtx("aten::conv2d, seq = 12, sizes = [[1, 3]]"));
  EXPECT_TRUE(is_torch_emit_nvtx("FSDP::post_forward (encoder.block.14.layer.0), op_id = 314310"));
  EXPECT_FALSE(is_torch_emit_nvtx("MPI_Send"));
  EXPECT_FALSE(is_torch_emit_nvtx("aten::add"));
  EXPECT_FALSE(is_torch_emit_nvtx("step, op_id = 3"));   // no namespace
  EXPECT_FALSE(is_torch_emit_nvtx("aten::add, op_id = "));
}

TEST(NsysDecode, Utf8RepairKeepsValidTextAndReplacesBadBytes) {
  EXPECT_TRUE(is_valid_utf8("plain"));
  EXPECT_TRUE(is_valid_utf8("Gr\xC3\xBC\xC3\x9F" "e \xE2\x82\xAC \xF0\x9F\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("bad \xFF byte"));
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));      // overlong
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));  // surrogate
  EXPECT_FALSE(is_valid_utf8("cut \xE2\x82"));
  EXPECT_EQ(sanitize_utf8("ok"), "ok");
  EXPECT_EQ(sanitize_utf8("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(sanitize_utf8("cut \xE2\x82"), "cut \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_TRUE(is_valid_utf8(sanitize_utf8("\x80\x81\xC3")));
}

TEST(NsysDecode, ImmutableUriEscapesReservedCharacters) {
  EXPECT_EQ(immutable_sqlite_uri("/data/run 1/report#2?.sqlite"),
            "file:/data/run%201/report%232%3F.sqlite?immutable=1");
  EXPECT_EQ(immutable_sqlite_uri("rel/a_b-c.sqlite"), "file:rel/a_b-c.sqlite?immutable=1");
  EXPECT_EQ(immutable_sqlite_uri("/x/100%.sqlite"), "file:/x/100%25.sqlite?immutable=1");
}

// The spellings seen for one GPU: TARGET_INFO_GPU.uuid is bare lower case (nsys2026_small), the
// per-process table may carry nvidia-smi's 'GPU-' prefix; nsys 2026.1 writes '' when it has none.
TEST(NsysDecode, GpuUuidKeys) {
  EXPECT_EQ(gpu_uuid_key("554a6988-03dd-6206-3dd1-f43fb60a3ed0"), "554a6988-03dd-6206-3dd1-f43fb60a3ed0");
  EXPECT_EQ(gpu_uuid_key("GPU-554A6988-03DD-6206-3DD1-F43FB60A3ED0"), "554a6988-03dd-6206-3dd1-f43fb60a3ed0");
  EXPECT_EQ(gpu_uuid_key(""), "");
  EXPECT_EQ(gpu_uuid_key("GPU-"), "");
  EXPECT_EQ(gpu_uuid_key("<unknown>"), "");
  EXPECT_EQ(gpu_uuid_key("---"), "");
}

// Bus ids: busLocation '0000:2D:00.0' (nsys2020_cudf), pciBusId with an 8-digit domain, no domain,
// lower case; '<UNKNOWN_BUS_ID>' (nsys2020_cudf's TARGET_INFO_CUDA_GPU) and junk give no key.
TEST(NsysDecode, PciBusKeys) {
  EXPECT_EQ(pci_bus_key("0000:2D:00.0"), "0:2d:0.0");
  EXPECT_EQ(pci_bus_key("00000000:2d:00.0"), "0:2d:0.0");
  EXPECT_EQ(pci_bus_key("2d:00.0"), "0:2d:0.0");
  EXPECT_EQ(pci_bus_key("0001:15:00.1"), "1:15:0.1");
  EXPECT_NE(pci_bus_key("0000:15:00.0"), pci_bus_key("0000:2D:00.0"));
  EXPECT_EQ(pci_bus_key("<UNKNOWN_BUS_ID>"), "");
  EXPECT_EQ(pci_bus_key(""), "");
  EXPECT_EQ(pci_bus_key("0000:2D:00"), "");
  EXPECT_EQ(pci_bus_key("0000:zz:00.0"), "");
  EXPECT_EQ(pci_bus_key("0:0:0:0.0"), "");
}

}  // namespace
}  // namespace proflint::nsys
