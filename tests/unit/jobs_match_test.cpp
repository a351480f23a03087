// tests/unit/jobs_match_test.cpp — matching collectives across ranks and aligning clocks
// (engine/derive/jobs.hpp) on small synthetic ranks whose true offsets and waits are known.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engine/derive/jobs.hpp"

using proflint::AlignmentResult;
using proflint::AlignOptions;
using proflint::RankCollective;
using proflint::RankCollectives;

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kStep = 100 * kMs;

// One all-reduce per step on `n` steps: rank k arrives at step*100ms + arrive[k] (true time) and
// all ranks end together at +40 ms (+ jitter[k] ns); rank k's clock reads true time - offset[k].
std::vector<RankCollectives> job(const std::vector<int64_t>& offset, const std::vector<int64_t>& arrive,
                                 const std::vector<int64_t>& jitter, int steps, bool with_seq = false) {
  std::vector<RankCollectives> ranks;
  for (size_t k = 0; k < offset.size(); ++k) {
    RankCollectives r;
    r.rank = static_cast<int64_t>(k);
    r.trace_id = static_cast<int64_t>(k) + 1;
    for (int s = 0; s < steps; ++s) {
      RankCollective c;
      c.type = "all_reduce";
      c.process_group = "0";
      c.bytes = 4096 * (1 + s % 3);
      if (with_seq) c.seq = s;
      int64_t t0 = s * kStep;
      c.start_ns = t0 + arrive[k] - offset[k];
      c.end_ns = t0 + 40 * kMs + ((s % 2) ? jitter[k] : -jitter[k]) - offset[k];
      c.iteration = s;
      r.calls.push_back(c);
    }
    ranks.push_back(std::move(r));
  }
  return ranks;
}

}  // namespace

TEST(JobsMatch, RecoversOffsetsAndNamesTheLastArriver) {
  // Offsets of +50 ms and -30 ms (rank 0 is the reference); rank 2 arrives 30 ms late every step.
  auto ranks = job({0, 50 * kMs, -30 * kMs}, {1 * kMs, 2 * kMs, 31 * kMs}, {0, 2000, 3000}, 10);
  AlignOptions o;
  o.median_step_ns = kStep;
  AlignmentResult r = proflint::match_and_align(ranks, o);
  ASSERT_TRUE(r.aligned) << r.note;
  // end_ref - end_r = offset[r] ± jitter: the median of an even count of +j/-j is the offset itself.
  EXPECT_EQ(r.offsets[1], 50 * kMs);
  EXPECT_EQ(r.offsets[2], -30 * kMs);
  EXPECT_EQ(r.residuals[1], 2000);
  EXPECT_EQ(r.residuals[2], 3000);
  EXPECT_EQ(r.residual_ns, 3000);
  ASSERT_EQ(r.instances.size(), 10u);
  for (const auto& inst : r.instances) {
    EXPECT_EQ(inst.last_rank, 2);
    EXPECT_EQ(inst.first_rank, 0);
    ASSERT_EQ(inst.participants.size(), 3u);
    // In job time rank 0 arrives at +1 ms, the last at +31 ms: rank 0 waits 30 ms, rank 1 29 ms.
    EXPECT_EQ(inst.participants[0].wait_ns, 30 * kMs);
    EXPECT_EQ(inst.participants[1].wait_ns, 29 * kMs);
    EXPECT_EQ(inst.participants[2].wait_ns, 0);
    for (const auto& p : inst.participants) EXPECT_EQ(p.wait_ns + p.transfer_ns, p.end_ns - p.start_ns);
  }
  // Instances are ordered by last arrival.
  for (size_t i = 1; i < r.instances.size(); ++i)
    EXPECT_LT(r.instances[i - 1].last_arrival_ns, r.instances[i].last_arrival_ns);
}

TEST(JobsMatch, RefusesImplausibleResiduals) {
  // Recorded sequence numbers pair the calls, but their ends do not line up (±20 ms around the
  // offset, alternating): no clock offset explains them within the limit (10% of a 100 ms step =
  // 10 ms, capped at 5 ms).
  auto ranks = job({0, 7 * kMs}, {0, 0}, {0, 20 * kMs}, 8, /*with_seq=*/true);
  AlignOptions o;
  o.median_step_ns = kStep;
  EXPECT_EQ(proflint::alignment_limit_ns(kStep), 5 * kMs);
  AlignmentResult r = proflint::match_and_align(ranks, o);
  EXPECT_FALSE(r.aligned);
  EXPECT_NE(r.note.find("refused"), std::string::npos) << r.note;
  EXPECT_NE(r.note.find("20.000 ms"), std::string::npos) << r.note;
  EXPECT_TRUE(r.instances.empty());
  ASSERT_TRUE(r.residual_ns.has_value());
  EXPECT_EQ(*r.residual_ns, 20 * kMs);
}

TEST(JobsMatch, LimitFollowsTheStep) {
  EXPECT_EQ(proflint::alignment_limit_ns(std::nullopt), 5 * kMs);
  EXPECT_EQ(proflint::alignment_limit_ns(20 * kMs), 2 * kMs);
  EXPECT_EQ(proflint::alignment_limit_ns(100'000), 100'000);  // floor 0.1 ms
}

TEST(JobsMatch, OrderMatchingFindsTheOffsetWhenCapturesStartApart) {
  // Rank 1's capture started two collectives later: its first call is rank 0's third. No
  // sequence or step numbers: the end differences of size-compatible pairs vote, and the offset
  // all true pairs share (4 ms) wins over the ones a step apart.
  auto ranks = job({0, 4 * kMs}, {0, 1 * kMs}, {0, 0}, 12);
  ranks[1].calls.erase(ranks[1].calls.begin(), ranks[1].calls.begin() + 2);
  AlignOptions o;
  o.median_step_ns = kStep;
  AlignmentResult r = proflint::match_and_align(ranks, o);
  ASSERT_TRUE(r.aligned) << r.note;
  EXPECT_EQ(r.offsets[1], 4 * kMs);
  EXPECT_EQ(r.residuals[1], 0);
  EXPECT_EQ(r.instances.size(), 10u);  // the two calls only rank 0 saw are not instances
  EXPECT_EQ(r.size_mismatches, 0);
}

TEST(JobsMatch, SampledTracesKeepOnlyTrueMatches) {
  // Each rank lost some collectives (a sampled trace): rank 0 lacks step 3's, rank 1 lacks
  // steps 5 and 6's. Pairs are made by closest end after the offset, so the 7 collectives both
  // recorded are instances and nothing is paired across steps.
  auto ranks = job({0, -45 * kMs}, {2 * kMs, 0}, {0, 500}, 10);
  ranks[0].calls.erase(ranks[0].calls.begin() + 3);
  ranks[1].calls.erase(ranks[1].calls.begin() + 5, ranks[1].calls.begin() + 7);
  AlignOptions o;
  o.median_step_ns = kStep;
  AlignmentResult r = proflint::match_and_align(ranks, o);
  ASSERT_TRUE(r.aligned) << r.note;
  EXPECT_NEAR(static_cast<double>(r.offsets[1]), -45.0 * kMs, 500.0);
  ASSERT_EQ(r.instances.size(), 7u);
  for (const auto& inst : r.instances) {
    ASSERT_EQ(inst.participants.size(), 2u);
    // Same step on both ranks: the call indices' iterations agree.
    EXPECT_EQ(ranks[0].calls[inst.participants[0].call].iteration, ranks[1].calls[inst.participants[1].call].iteration);
    EXPECT_EQ(inst.last_rank, 0);  // rank 0 arrives 2 ms after rank 1 every step
  }
}

TEST(JobsMatch, UnsynchronisedRanksAreRefused) {
  // Rank 1's steps last 130 ms against rank 0's 100 ms: ranks that never wait for each other are
  // not synchronised by these collectives, and no single offset makes their ends meet.
  auto ranks = job({0, 0}, {0, 0}, {0, 0}, 9);
  for (size_t i = 0; i < ranks[1].calls.size(); ++i) {
    ranks[1].calls[i].start_ns += static_cast<int64_t>(i) * 30 * kMs;
    ranks[1].calls[i].end_ns += static_cast<int64_t>(i) * 30 * kMs;
  }
  AlignOptions o;
  o.median_step_ns = kStep;
  AlignmentResult r = proflint::match_and_align(ranks, o);
  EXPECT_FALSE(r.aligned);
  EXPECT_NE(r.note.find("end together"), std::string::npos) << r.note;
  EXPECT_TRUE(r.instances.empty());
}

TEST(JobsMatch, RecordedSequenceNumbersWin) {
  // With Seq recorded, matching ignores order: rank 1 lists its calls in reverse.
  auto ranks = job({0, -2 * kMs}, {0, 5 * kMs}, {0, 0}, 6, /*with_seq=*/true);
  std::reverse(ranks[1].calls.begin(), ranks[1].calls.end());
  AlignmentResult r = proflint::match_and_align(ranks, AlignOptions{});
  ASSERT_TRUE(r.aligned) << r.note;
  EXPECT_EQ(r.offsets[1], -2 * kMs);
  ASSERT_EQ(r.instances.size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(r.instances[i].seq, static_cast<int64_t>(i));
  for (const auto& inst : r.instances) EXPECT_EQ(inst.last_rank, 1);
}

TEST(JobsMatch, SequenceNumbersThatDoNotRecurAreIgnored) {
  // Each rank numbers its calls from its own counter (rank 0: 0, 2, 4…; rank 1: 1, 3, 5…): not a
  // per-group sequence shared by the ranks, so the calls are matched by their ends instead.
  auto ranks = job({0, 20 * kMs}, {3 * kMs, 0}, {0, 0}, 6, /*with_seq=*/true);
  for (size_t k = 0; k < 2; ++k)
    for (size_t i = 0; i < ranks[k].calls.size(); ++i) ranks[k].calls[i].seq = static_cast<int64_t>(2 * i + k);
  AlignOptions o;
  o.median_step_ns = kStep;
  AlignmentResult r = proflint::match_and_align(ranks, o);
  ASSERT_TRUE(r.aligned) << r.note;
  EXPECT_EQ(r.offsets[1], 20 * kMs);
  ASSERT_EQ(r.instances.size(), 6u);
  for (const auto& inst : r.instances) EXPECT_EQ(inst.last_rank, 0);
}

TEST(JobsMatch, SharedClockKeepsZeroOffsets) {
  auto ranks = job({0, 0}, {0, 3 * kMs}, {0, 1000}, 4);
  AlignOptions o;
  o.same_clock = true;
  AlignmentResult r = proflint::match_and_align(ranks, o);
  ASSERT_TRUE(r.aligned);
  EXPECT_EQ(r.offsets[1], 0);
  EXPECT_EQ(r.residuals[1], 1000);
}

TEST(JobsMatch, NoSharedCollectiveIsRefused) {
  auto ranks = job({0, 0}, {0, 0}, {0, 0}, 3);
  for (auto& c : ranks[1].calls) c.process_group = "other";
  AlignmentResult r = proflint::match_and_align(ranks, AlignOptions{});
  EXPECT_FALSE(r.aligned);
  EXPECT_NE(r.note.find("shares no matched collective"), std::string::npos) << r.note;
}

TEST(JobsMatch, CollectiveTypes) {
  EXPECT_EQ(proflint::collective_type("nccl:all_reduce"), "all_reduce");
  EXPECT_EQ(proflint::collective_type("gloo:all_reduce"), "all_reduce");
  EXPECT_EQ(proflint::collective_type("c10d::allreduce_"), "all_reduce");
  EXPECT_EQ(proflint::collective_type("allreduce"), "all_reduce");
  EXPECT_EQ(proflint::collective_type("_allgather_base"), "all_gather");
  EXPECT_EQ(proflint::collective_type("nccl:_reduce_scatter_base"), "reduce_scatter");
  EXPECT_EQ(proflint::collective_type("c10d::alltoall_base_"), "all_to_all");
  EXPECT_EQ(proflint::collective_type("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            "all_reduce");
  EXPECT_EQ(proflint::collective_type("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)"), "send_recv");
  EXPECT_EQ(proflint::collective_type("gloo:broadcast"), "broadcast");
  EXPECT_EQ(proflint::collective_type("c10d::barrier"), "barrier");
  EXPECT_EQ(proflint::collective_type("nccl:send"), "send_recv");
  EXPECT_EQ(proflint::collective_type("c10d::recv_"), "send_recv");
  EXPECT_EQ(proflint::collective_type("nccl:reduce"), "reduce");
  EXPECT_EQ(proflint::collective_type("record_param_comms"), "unidentified");
}
