// engine/export/paraver.hpp — the fact store as a Paraver trace (.prv + .pcf + .row), laid out as
// nsys2prv lays out an Nsight Systems export (docs/export.md): one task per rank; in each task
// one thread (row) per host thread, then one per GPU stream; states for kernels, copies, memsets,
// runtime calls and synchronizations; events naming them, with their value tables in the .pcf;
// launch -> GPU work as communications.
#pragma once

#include <cstdint>
#include <ostream>

#include <vector>

#include "engine/analysis/finding.hpp"
#include "engine/store/store.hpp"

namespace proflint::exporter {

struct ParaverExportStats {
  int64_t records = 0;  // lines of the .prv after its header
  int64_t tasks = 0, threads = 0;
};

// Paraver needs its records in time order, so the .prv body is collected (compactly) and sorted
// before it is written; the .pcf and .row are small. Findings (in ranked order) become one event
// type each on their rank's first row, set to 1 over the time they cover.
ParaverExportStats write_paraver(Store& store, const std::vector<Finding>& findings, std::ostream& prv, std::ostream& pcf,
                                 std::ostream& row);

// Event types written (nsys2prv's numbers where nsys2prv has the same thing).
inline constexpr int64_t kPrvApiCall = 63000000;      // CUDA/HIP runtime or driver call (value table)
inline constexpr int64_t kPrvCopySize = 63000002;     // bytes of a copy or memset
inline constexpr int64_t kPrvGpuActivity = 63000006;  // kernel / copy / memset name (value table)
inline constexpr int64_t kPrvCorrelation = 9200;      // correlation id of a kernel and its launch
inline constexpr int64_t kPrvNvtx = 9003;             // NVTX push/pop ranges (value table)
inline constexpr int64_t kPrvFrameworkOp = 9010;      // framework ops, e.g. aten::conv2d (value table)
inline constexpr int64_t kPrvAnnotation = 9011;       // user annotations, record_function (value table)
inline constexpr int64_t kPrvPython = 9012;           // Python function frames (value table)
inline constexpr int64_t kPrvGpuAnnotation = 9013;    // GPU-side user annotations (value table)
inline constexpr int64_t kPrvOtherRange = 9014;       // other host ranges (value table)
inline constexpr int64_t kPrvIteration = 9020;        // iteration ordinal + 1
inline constexpr int64_t kPrvFinding = 9300;          // + position (1..kPrvMaxFindings): 1 while the finding applies
inline constexpr int64_t kPrvMaxFindings = 500;
inline constexpr int64_t kPrvTagLaunch = 55001;       // communication tag: launch -> kernel
inline constexpr int64_t kPrvTagMemory = 55002;       // communication tag: launch -> copy / memset

}  // namespace proflint::exporter
