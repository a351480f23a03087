// tests/unit/kineto_numbers_test.cpp — exact µs-text -> ns conversion and Kineto id parsing.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "engine/import/kineto/names.hpp"
#include "engine/import/kineto/numbers.hpp"

namespace proflint::kineto {
namespace {

TEST(KinetoNumbers, MicrosecondIntsBecomeNanoseconds) {
  EXPECT_EQ(us_text_to_ns("0"), 0);
  EXPECT_EQ(us_text_to_ns("3"), 3000);
  EXPECT_EQ(us_text_to_ns("1683564901548726"), int64_t{1683564901548726000});
  EXPECT_EQ(us_text_to_ns(" 42 \n"), 42000);
  EXPECT_EQ(us_text_to_ns("\"17\""), 17000);  // quoted numbers appear in hand-made traces
}

TEST(KinetoNumbers, NanosecondFractionsAreExactWhereADoubleIsNot) {
  // 1419247333430.849 µs: fine in a double. Epoch-scale values are not: 1712195495505543.2 µs
  // is 1712195495505543200 ns, but (int64)(1712195495505543.2 * 1000) is off by tens of ns.
  EXPECT_EQ(us_text_to_ns("1419247333430.849"), int64_t{1419247333430849});
  EXPECT_EQ(us_text_to_ns("1712195495505543.2"), int64_t{1712195495505543200});
  EXPECT_EQ(us_text_to_ns("1712195495519689.0"), int64_t{1712195495519689000});
  EXPECT_EQ(us_text_to_ns("1669783687464181.123"), int64_t{1669783687464181123});
  double lossy = 1669783687464181.123 * 1000.0;
  EXPECT_NE(static_cast<int64_t>(lossy), int64_t{1669783687464181123});
  EXPECT_EQ(us_text_to_ns("0.769"), 769);
  EXPECT_EQ(us_text_to_ns("63.813"), 63813);
  EXPECT_EQ(us_text_to_ns("1.28"), 1280);
}

TEST(KinetoNumbers, DigitsBeyondNanosecondsAreRoundedHalfAwayFromZero) {
  EXPECT_EQ(us_text_to_ns("1.0004"), 1000);
  EXPECT_EQ(us_text_to_ns("1.0005"), 1001);
  EXPECT_EQ(us_text_to_ns("1.00049999"), 1000);
  EXPECT_EQ(us_text_to_ns("0.0009"), 1);
  EXPECT_EQ(us_text_to_ns("-1.0005"), -1001);
  EXPECT_EQ(us_text_to_ns("1712195495505543.2345678"), int64_t{1712195495505543235});
}

TEST(KinetoNumbers, ExponentsAndNegatives) {
  EXPECT_EQ(us_text_to_ns("1e3"), 1000000);
  EXPECT_EQ(us_text_to_ns("1.5E+2"), 150000);
  EXPECT_EQ(us_text_to_ns("2.5e-3"), 3);  // 2.5 ns rounds away from zero
  EXPECT_EQ(us_text_to_ns("1.6e15"), int64_t{1600000000000000000});
  EXPECT_EQ(us_text_to_ns("1e-400"), 0);
  EXPECT_EQ(us_text_to_ns("0e99999"), 0);
  EXPECT_EQ(us_text_to_ns("-5"), -5000);
}

TEST(KinetoNumbers, RejectsWhatIsNotANumberOrDoesNotFit) {
  EXPECT_EQ(us_text_to_ns(""), std::nullopt);
  EXPECT_EQ(us_text_to_ns("NaN"), std::nullopt);
  EXPECT_EQ(us_text_to_ns("Infinity"), std::nullopt);
  EXPECT_EQ(us_text_to_ns("-Infinity"), std::nullopt);
  EXPECT_EQ(us_text_to_ns("null"), std::nullopt);
  EXPECT_EQ(us_text_to_ns("12abc"), std::nullopt);
  EXPECT_EQ(us_text_to_ns("1e"), std::nullopt);
  EXPECT_EQ(us_text_to_ns("."), std::nullopt);
  EXPECT_EQ(us_text_to_ns("{"), std::nullopt);
  // 9223372036854775807 ns is the largest; one more µs does not fit.
  EXPECT_EQ(us_text_to_ns("9223372036854775.807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(us_text_to_ns("9223372036854775.808"), std::nullopt);
  EXPECT_EQ(us_text_to_ns("99999999999999999999999"), std::nullopt);
  EXPECT_EQ(us_text_to_ns("1e400"), std::nullopt);
}

TEST(KinetoNumbers, IntegersFromText) {
  EXPECT_EQ(int_from_text("42"), 42);
  EXPECT_EQ(int_from_text("-1 "), -1);
  EXPECT_EQ(int_from_text("4.0"), 4);
  EXPECT_EQ(int_from_text("1e3"), 1000);
  EXPECT_EQ(int_from_text("\"108\""), 108);
  EXPECT_EQ(int_from_text("4.5"), std::nullopt);
  EXPECT_EQ(int_from_text("9223372036854775808"), std::nullopt);  // int64 overflow
  EXPECT_EQ(int_from_text("true"), std::nullopt);
  EXPECT_EQ(int_from_text("[1]"), std::nullopt);
}

TEST(KinetoNumbers, StringPidsAndTids) {
  EXPECT_EQ(id_from_text("25738"), 25738);
  EXPECT_EQ(id_from_text("stream 7"), 7);
  EXPECT_EQ(id_from_text("stream 7 "), 7);
  EXPECT_EQ(id_from_text("4290336512"), int64_t{4290336512});
  EXPECT_EQ(id_from_text("Spans"), std::nullopt);
  EXPECT_EQ(id_from_text("PyTorch Profiler"), std::nullopt);
  EXPECT_EQ(id_from_text("abc7"), std::nullopt);
}

TEST(KinetoNames, MemcpyDirectionAndMemoryKindsComeFromTheName) {
  auto a = parse_memcpy_name("Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(a.kind, "htod");
  EXPECT_EQ(a.src_kind, "pageable");
  EXPECT_EQ(a.dst_kind, "device");
  auto b = parse_memcpy_name("Memcpy DtoH (Device -> Pinned)");
  EXPECT_EQ(b.kind, "dtoh");
  EXPECT_EQ(b.src_kind, "device");
  EXPECT_EQ(b.dst_kind, "pinned");
  auto c = parse_memcpy_name("Memcpy DtoD (Device -> Device)");
  EXPECT_EQ(c.kind, "dtod");
  auto amd = parse_memcpy_name("Memcpy HtoD (Host -> Device)");  // ROCm: host memory kind unknown
  EXPECT_EQ(amd.kind, "htod");
  EXPECT_EQ(amd.src_kind, "unknown");
  auto p2p = parse_memcpy_name("Memcpy PtoP (Device -> Device)");
  EXPECT_EQ(p2p.kind, "ptop");
  auto odd = parse_memcpy_name("Memcpy");
  EXPECT_EQ(odd.kind, "unknown");
  EXPECT_EQ(odd.src_kind, std::nullopt);
  EXPECT_EQ(parse_memset_kind("Memset (Device)"), "device");
  EXPECT_EQ(parse_memset_kind("Memset (Pinned)"), "pinned");
  EXPECT_EQ(parse_memset_kind("Memset"), std::nullopt);
}

TEST(KinetoNames, CategoriesOldAndNew) {
  EXPECT_EQ(classify_category("Operator"), Category::cpu_op);
  EXPECT_EQ(classify_category("cpu_op"), Category::cpu_op);
  EXPECT_EQ(classify_category("Runtime"), Category::legacy_runtime);
  EXPECT_EQ(classify_category("cuda_runtime"), Category::runtime);
  EXPECT_EQ(classify_category("cuda_driver"), Category::driver);
  EXPECT_EQ(classify_category("Kernel"), Category::kernel);
  EXPECT_EQ(classify_category("Memcpy"), Category::memcpy);
  EXPECT_EQ(classify_category("gpu_memset"), Category::memset);
  EXPECT_EQ(classify_category("async"), Category::flow);
  EXPECT_EQ(classify_category("mtia_runtime"), Category::other_runtime);
  EXPECT_EQ(classify_category("mtia_ccp_events"), Category::device_activity);
  EXPECT_EQ(classify_category("Trace"), Category::ignored);
  EXPECT_EQ(classify_category("kernels"), Category::unknown);
  EXPECT_EQ(flow_kind("async_cpu_to_gpu"), "ac2g");
  EXPECT_EQ(flow_kind("fwdbwd"), "fwdbwd");
  EXPECT_TRUE(is_legacy_annotation("ProfilerStep#5"));
  EXPECT_TRUE(is_legacy_annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"));
  EXPECT_FALSE(is_legacy_annotation("aten::conv2d"));
}

TEST(KinetoNames, ApiNames) {
  EXPECT_EQ(legacy_api_kind("cudaLaunchKernel"), "runtime");
  EXPECT_EQ(legacy_api_kind("cuLaunchKernel"), "driver");
  EXPECT_EQ(legacy_api_kind("cuModuleLoadData"), "driver");
  EXPECT_EQ(legacy_api_kind("hipLaunchKernel"), "runtime");
  EXPECT_EQ(strip_api_version("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(strip_api_version("cuMemAlloc_v2"), "cuMemAlloc_v2");
  EXPECT_EQ(strip_api_version("hipGetDevicePropertiesR0600"), "hipGetDevicePropertiesR0600");
  EXPECT_EQ(sync_kind_from_name("Event Sync"), "event_sync");
  EXPECT_EQ(sync_kind_from_name("Stream Wait Event"), "stream_wait_event");
  EXPECT_EQ(sync_kind_from_name("Context Sync"), "context_sync");
  EXPECT_EQ(sync_kind_from_name("Something"), "unknown");
  EXPECT_EQ(vendor_from_device_name("AMD Instinct MI300X"), "amd");
  EXPECT_EQ(vendor_from_device_name("Tesla V100-SXM2-32GB"), "nvidia");
  EXPECT_EQ(vendor_from_device_name(""), std::nullopt);
}

}  // namespace
}  // namespace proflint::kineto
