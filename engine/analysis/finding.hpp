// engine/analysis/finding.hpp — what detectors and Lua rules report.
//
// A finding says what was measured (problem, with numbers), what to change (recommendation),
// the evidence, and how much wall time fixing it could save. Rendering lives in report/.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/common/severity.hpp"

namespace proflint {

struct Scope {
  std::optional<int64_t> trace_id, device_id, rank;
  std::optional<int64_t> iter_first, iter_last;  // iteration ordinals the finding covers
};

// A place in the user's code that a finding's evidence comes from (schema/0008_source.sql):
// the innermost user frame of the ops, syncs, copies or launches behind it, with how often and
// how long per step. Filled by detectors through engine/analysis/source_sites.hpp.
struct SourceLocation {
  std::string file;               // as the profile records it, e.g. 'train.py'; '' when only the module is known
  int64_t line = 0;               // 0 when unknown
  std::string function;
  std::string module_path;        // nn.Module path, e.g. 'Net_0/Encoder_0/Linear_2'; '' when not recorded
  std::string what;               // the op or call seen there most, e.g. 'aten::item'
  int64_t count = 0;              // evidence items at this place
  int64_t time_ns = 0;            // their time (time_label says which)
  std::string time_label;         // e.g. 'host blocked', 'GPU time', 'waited'
  int64_t iterations = 0;         // steps the per-step figures divide by (0: the trace has none)
};

struct Finding {
  std::string id;                       // detector/rule id, kebab-case
  std::string title;
  std::optional<Severity> severity;     // set only when the detector fixes it; else derived from the share
  std::string problem;                  // what was measured, with numbers
  std::string recommendation;           // what to change, concretely
  nlohmann::ordered_json evidence = nlohmann::ordered_json::object();  // metrics, names, row ids
  int64_t estimated_savings_ns = 0;     // Amdahl-bounded estimate of wall time recovered
  std::string savings_method;           // how the estimate was made, in one sentence
  double confidence = 0.5;              // 0..1
  bool diagnostic = false;              // about the profile itself (no iterations, dropped events ...)
  Scope scope;
  std::string source = "builtin";       // 'builtin' or the Lua rule file

  // The evidence the saving comes from, so that ranking never counts one saving twice: each key
  // names one piece of evidence ("memcpy:12" for a copy row, "kernel:7", or a root cause such as
  // "optimizer-kernels:t1:d0") with the part of estimated_savings_ns it accounts for. When two
  // findings claim the same key, only the larger claim counts: ranking subtracts the smaller one
  // from the finding ranked lower (docs/output-json.md, "Overlapping findings").
  std::map<std::string, int64_t> claims;
  // True for a finding that measures GPU-idle time without naming its cause (gpu-underutilized,
  // gpu-idle-gaps). Ranking visits it after the findings that name a concrete cause, so idle time
  // both claim (the "gpu-idle:" keys of engine/analysis/idle_claims.hpp) counts for the concrete
  // finding, and the generic one keeps only what nothing else explains.
  bool generic = false;
  // Thresholds ranking applies to the saving left after overlaps: a finding under either is not
  // listed but recorded in the "checked, below threshold" list with its estimate (0 = none).
  int64_t min_savings_ns = 0;
  double min_wall_share = 0;

  // Filled by ranking:
  double savings_share = 0;             // estimated_savings_ns / wall time of its scope
  Severity effective_severity = Severity::info;
  int64_t gross_savings_ns = 0;         // the detector's estimate before overlaps were subtracted
  struct Overlap {
    std::string id;                     // the higher-ranked finding that already counts it
    size_t rank = 0;                    // its 1-based position among the ranked problems
    int64_t shared_ns = 0;              // what was subtracted from this finding's estimate
  };
  std::vector<Overlap> overlaps;
  // Filled by ranking when this finding stands for the same finding on several ranks or GPUs of
  // one job (ranking.hpp, "One finding per job problem"): the per-rank/per-GPU findings it merges,
  // each with its own scope, estimate, overlaps and evidence. Empty for an ordinary finding.
  std::vector<Finding> instances;
  // Where in the user's code the evidence comes from, largest time first (empty when the profile
  // records no Python frames); rendered as text, JSON, markdown and SARIF physicalLocations.
  std::vector<SourceLocation> locations;
};

// A check that ran and stayed under its threshold: recorded so that nobody reads a missing finding
// as "proflint did not look". `value` and `threshold` are in `unit` ("ns", "share" of wall time
// or of the measured whole, "count", ...); `measured` says what, in a few words.
struct BelowThreshold {
  std::string id;        // detector or rule id
  std::string measured;  // e.g. "estimated saving", "GPU-idle data loading share of step time"
  double value = 0;
  double threshold = 0;
  std::string unit;
  Scope scope;
  std::string source = "builtin";  // 'builtin' or the Lua rule file
  std::string detail;              // a finding held back by ranking: its problem text
  // The same check on several ranks/GPUs of one job, merged by ranking into this entry (which
  // keeps the largest value, the closest to the threshold); empty for a check made once.
  struct Instance {
    Scope scope;
    double value = 0;
    std::string label;  // "rank 1", "GPU 0", "rank 1 (GPU 1)"
  };
  std::vector<Instance> instances;
};

// Where detectors put findings.
class FindingSink {
 public:
  virtual ~FindingSink() = default;
  virtual void report(Finding finding) = 0;
  // A check that evaluated and stayed under a threshold (the detector's own; central thresholds
  // of a finding are applied by ranking).
  virtual void below_threshold(BelowThreshold check) = 0;
};

class VectorSink final : public FindingSink {
 public:
  void report(Finding finding) override { findings.push_back(std::move(finding)); }
  void below_threshold(BelowThreshold check) override { checks.push_back(std::move(check)); }
  std::vector<Finding> findings;
  std::vector<BelowThreshold> checks;
};

}  // namespace proflint
