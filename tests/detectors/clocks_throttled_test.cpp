// tests/detectors/clocks_throttled_test.cpp — readings no GPU can give (a negative or 10^308 MHz
// clock, a throttle-reason mask of -1 or 2^64) are not evidence: the detector neither converts them
// (undefined for a mask outside 0 .. 2^64 - 1) nor turns them into a clock ratio and a saving. The
// firing and silent cases on generated logs are the golden cases tests/cases/clocks-throttled-*.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <unistd.h>

#include "tests/support/analysis.hpp"

using namespace proflint::testing;

TEST(ClocksThrottled, ImpossibleReadingsAreNotEvidence) {
  std::string path = ::testing::TempDir() + "clocks_" + std::to_string(getpid()) + ".csv";
  {
    std::ofstream out(path);
    // Four busy samples at the maximum clock, read by hand: a mask of -1 and one of 2^64 (all bits
    // of 0xffffffffffffffff round to 2^64 as a double) are not masks; 0x1 (GPU idle) is no cause;
    // 0x4 (software power cap) is, with a clock of -1e308 MHz that is no reading.
    out << "timestamp, index, utilization.gpu [%], clocks.sm [MHz], clocks.max.sm [MHz], clocks_throttle_reasons.active\n"
           "2025/06/01 12:00:00.000, 0, 90 %, 1410 MHz, 1410 MHz, -1\n"
           "2025/06/01 12:00:01.000, 0, 90 %, 1410 MHz, 1410 MHz, 0xffffffffffffffff\n"
           "2025/06/01 12:00:02.000, 0, 90 %, 1e308 MHz, 1410 MHz, 0x0000000000000001\n"
           "2025/06/01 12:00:03.000, 0, 90 %, -1e308 MHz, 1410 MHz, 0x0000000000000004\n";
  }
  auto f = findings_of(analyze_with(path, "clocks-throttled"), "clocks-throttled");
  ::unlink(path.c_str());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["busy_samples"], 4);
  EXPECT_EQ(f[0].evidence["throttled_samples"], 1);  // the power-capped sample only
  EXPECT_EQ(f[0].evidence["causes"].dump(), R"({"power":1})");
  EXPECT_FALSE(f[0].evidence.contains("mean_clock_ratio"));  // its only clock reading was no reading
  EXPECT_EQ(f[0].estimated_savings_ns, 0);
  EXPECT_EQ(f[0].problem, "GPU 0 ran throttled in 1 of 4 busy samples (25.0%): power in 1 samples.");
}
