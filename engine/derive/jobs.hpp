// engine/derive/jobs.hpp — the ranks of one distributed job: which traces form a job, collective
// instances matched across ranks, clock offsets, and each rank's wait and transfer.
//
// Runs after every trace is derived (it reads ops, kernel categories and links, iterations): a pure
// function of the models of all traces of one load, whose result (JobFacts) the store writes into
// the job tables of schema/0005_jobs.sql with the traces. The matching and alignment work on plain
// structs (match_and_align) so tests can feed them without models. Rules: docs/multi-rank.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/derive/derive.hpp"
#include "engine/model/model.hpp"

namespace proflint {

// One collective call as one rank performed it, on that rank's own clock.
struct RankCollective {
  std::optional<int64_t> op_id, kernel_id;  // positions in the rank's model (its ops, its kernels)
  std::string process_group;     // '' when not recorded
  std::optional<int64_t> seq;    // recorded sequence number
  std::string type;              // all_reduce, all_gather, ... (collective_type)
  std::optional<int64_t> bytes;  // message size when known
  std::optional<int64_t> step_number;  // the step number (ProfilerStep#N) it ran in, when known
  std::optional<int64_t> iteration;    // the rank's iteration ordinal it started in
  int64_t start_ns = 0, end_ns = 0;    // arrival and end
};

struct RankCollectives {
  int64_t rank = 0;
  int64_t trace_id = 0;  // derive_jobs: index of its model
  std::vector<RankCollective> calls;  // any order
};

struct MatchedParticipation {
  int64_t rank = 0;
  size_t call = 0;  // index into that rank's calls
  int64_t start_ns = 0, end_ns = 0, wait_ns = 0, transfer_ns = 0;  // job clock
};

struct MatchedInstance {
  std::string process_group;
  int64_t seq = 0;
  std::string type;
  std::optional<int64_t> bytes;
  int64_t first_rank = 0, last_rank = 0, last_arrival_ns = 0, end_ns = 0;
  std::vector<MatchedParticipation> participants;  // by rank
};

struct AlignmentResult {
  bool aligned = false;
  std::optional<int64_t> residual_ns;
  std::string note;                       // '' when fine
  std::vector<int64_t> offsets;           // per input rank (same order as the input)
  std::vector<std::optional<int64_t>> residuals;  // per input rank: median |residual|
  std::vector<MatchedInstance> instances;  // in order of last arrival; empty when not aligned
  int64_t size_mismatches = 0;             // matched instances whose participants recorded different sizes
};

struct AlignOptions {
  bool same_clock = false;  // the ranks share one clock (processes of one nsys export): no offsets
  std::optional<int64_t> median_step_ns;  // sets the implausibility limit (docs/multi-rank.md)
};

// Matches the collectives of the ranks (rank 0 of the input is the clock reference) and aligns
// their clocks; see docs/multi-rank.md for the rules and limits.
AlignmentResult match_and_align(const std::vector<RankCollectives>& ranks, const AlignOptions& options);

// The residual above which alignment is refused, for a job whose median step is `median_step_ns`.
int64_t alignment_limit_ns(std::optional<int64_t> median_step_ns);

// 'all_reduce', 'all_gather', ... from a collective, c10d op, backend range or NCCL kernel name;
// 'unidentified' when none fits.
std::string collective_type(std::string_view name);

// Groups the traces (derived models, in the order they are written: a trace's index is its place
// in `traces`) into jobs and matches their collectives: the rows of job, job_rank,
// collective_instance and collective_participation. options.job_by: 'auto' (default), 'given' or
// 'none'. Reads only the models.
JobFacts derive_jobs(const std::vector<const TraceModel*>& traces, const DeriveOptions& options);

}  // namespace proflint
