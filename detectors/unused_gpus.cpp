// detectors/unused_gpus.cpp — unused-gpus
// Info: the trace lists GPUs (the host's visible devices) on which the profiled job ran nothing.
// They are left out of utilization; this names them, as DLProf's underutilization check does.
// Docs: docs/detectors/unused-gpus.md
#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>

#include "engine/analysis/detector.hpp"

namespace proflint {

namespace {

std::string host_of(const Facts& facts, int64_t trace_id) {
  SQLite::Statement q(facts.db(), "SELECT COALESCE(host_name, '') FROM trace WHERE trace_id = ?");
  q.bind(1, trace_id);
  return q.executeStep() ? q.getColumn(0).getString() : "";
}

class UnusedGpus final : public Detector {
 public:
  explicit UnusedGpus(const OptionValues&) {}
  std::string_view id() const override { return "unused-gpus"; }
  std::string_view title() const override { return "Visible GPUs that the profiled job did not use"; }
  std::vector<std::string> needs() const override { return {"gpu_activity"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* s = facts.summary(trace_id);
    if (!s || s->idle_devices.empty() || s->devices.empty()) return;
    // The job this trace is a rank of (schema/0005_jobs.sql): its other ranks use the node's
    // other GPUs. A lone trace is a job of one rank.
    const std::string host = host_of(facts, trace_id);
    std::set<int64_t> job_traces;  // the job's other traces, on this host or one not recorded
    std::optional<int64_t> job_world, job_ranks;
    {
      SQLite::Statement q(facts.db(),
                          "SELECT j.job_id, j.world_size, j.ranks_present FROM job j JOIN job_rank r ON r.job_id = j.job_id "
                          "WHERE r.trace_id = ? LIMIT 1");
      q.bind(1, trace_id);
      if (q.executeStep()) {
        int64_t job_id = q.getColumn(0).getInt64();
        if (!q.isColumnNull(1)) job_world = q.getColumn(1).getInt64();
        job_ranks = q.getColumn(2).getInt64();
        // Two ranks of one job on one host never drive the same GPU (NCCL refuses a duplicate
        // GPU): ranks that report one device id number their GPUs per process
        // (CUDA_VISIBLE_DEVICES) in exports that do not say which GPU each one is, and the listed
        // GPUs cannot be matched to the used ones.
        SQLite::Statement d(facts.db(),
                            "SELECT r.device_id, r.trace_id, COALESCE(t.host_name, '') FROM job_rank r JOIN trace t "
                            "ON t.trace_id = r.trace_id WHERE r.job_id = ? AND r.device_id IS NOT NULL");
        d.bind(1, job_id);
        std::map<std::pair<int64_t, std::string>, int> ranks_on_device;
        while (d.executeStep())
          if (++ranks_on_device[{d.getColumn(0).getInt64(), d.getColumn(2).getString()}] > 1) return;
        // Unknown hosts (nsys keeps none) join any: one-export-per-rank jobs of one node are the
        // common case; ranks on other nodes with the same numbers only hide GPUs, never invent one.
        SQLite::Statement t(facts.db(), "SELECT DISTINCT trace_id FROM job_rank WHERE job_id = ? AND trace_id <> ?");
        t.bind(1, job_id);
        t.bind(2, trace_id);
        while (t.executeStep()) {
          int64_t other = t.getColumn(0).getInt64();
          std::string h = host_of(facts, other);
          if (host.empty() || h.empty() || h == host) job_traces.insert(other);
        }
      }
    }
    // A rank of a distributed job lists the node's GPUs; the other ranks use them. Judge only
    // when every rank is loaded (then the loaded traces say which GPUs ran work) or the job is
    // one process (world size 1, or no distributed information at all).
    const auto& all = facts.summaries();
    bool distributed = (s->world_size && *s->world_size > 1) || (s->rank && !s->world_size) || (job_ranks && *job_ranks > 1);
    bool complete = (job_world && job_ranks && *job_ranks >= *job_world) ||
                    (s->world_size && static_cast<int64_t>(all.size()) >= *s->world_size) ||
                    (!s->world_size && !s->rank && job_ranks && *job_ranks > 1);
    if (distributed && !complete) return;
    // Work on a GPU the trace does not describe (ROCm/HIP numbering its devices differently from the
    // profiler's device list): the listed ids cannot be matched to the used ones.
    {
      SQLite::Statement q(facts.db(),
                          "SELECT count(*) FROM device WHERE trace_id = ? AND has_activity = 1 AND name IS NULL AND "
                          "compute_major IS NULL AND sm_count IS NULL AND memory_bytes IS NULL");
      q.bind(1, trace_id);
      if (q.executeStep() && q.getColumn(0).getInt64() > 0) return;
    }
    // A GPU that another rank of the job, or another loaded trace of the same host, used is not unused.
    auto shares_gpus = [&](int64_t other) { return job_traces.count(other) || host_of(facts, other) == host; };
    std::map<int64_t, const DeviceSummary*> used;  // by this trace and those sharing its GPUs
    for (const auto& d : s->devices) used.emplace(d.device_id, &d);
    std::set<int64_t> used_elsewhere;
    for (const auto& other : all) {
      if (other.trace_id == trace_id || !shares_gpus(other.trace_id)) continue;
      for (const auto& d : other.devices) {
        used_elsewhere.insert(d.device_id);
        used.emplace(d.device_id, &d);
      }
    }
    std::vector<const DeviceSummary*> idle;
    for (const auto& d : s->idle_devices)
      if (!used_elsewhere.count(d.device_id)) idle.push_back(&d);
    if (idle.empty()) return;
    // Report once per job and host: the trace with the smallest id among those listing the GPU does.
    for (const auto& other : all) {
      if (other.trace_id >= trace_id || !shares_gpus(other.trace_id)) continue;
      for (const auto& d : other.idle_devices)
        for (const auto* mine : idle)
          if (mine->device_id == d.device_id) return;
    }

    auto describe = [](const DeviceSummary& d) {
      return fmt::format("GPU {}{}", d.device_id, d.name.empty() ? "" : " (" + d.name + ")");
    };
    std::string used_list, idle_list;
    for (const auto& [id, d] : used) used_list += (used_list.empty() ? "" : ", ") + describe(*d);
    for (const auto* d : idle) idle_list += (idle_list.empty() ? "" : ", ") + describe(*d);
    size_t visible = s->devices.size() + s->idle_devices.size();

    Finding f = make_finding(FindingScope::of_trace(trace_id));
    f.severity = Severity::info;
    f.confidence = distributed ? 0.9 : 0.7;
    f.problem = fmt::format(
        "{} of the {} GPUs this trace lists ran no kernel, copy or memset: {}. The job used {} only. "
        "Utilization and the time breakdown cover the GPU(s) that ran work; the unused ones are not averaged in.",
        idle.size(), visible, idle_list, used_list);
    f.recommendation = fmt::format(
        "If this machine's other GPUs are meant for this job, spread the work over them: one process per GPU "
        "with torch.distributed (torchrun --nproc_per_node={} …, DistributedDataParallel) for training, or several "
        "independent workers for inference. If they belong to other jobs, nothing to change; restricting the "
        "process with {} keeps profiles and tools from listing them.",
        visible,
        // ROCm: HIP_VISIBLE_DEVICES (PyTorch's ROCm build also honours CUDA_VISIBLE_DEVICES).
        s && s->vendor && *s->vendor == "amd" ? "HIP_VISIBLE_DEVICES" : "CUDA_VISIBLE_DEVICES");
    nlohmann::ordered_json ids = nlohmann::ordered_json::array(), names = nlohmann::ordered_json::array();
    for (const auto* d : idle) {
      ids.push_back(d->device_id);
      names.push_back(d->name);
    }
    f.evidence["unused_device_ids"] = ids;
    f.evidence["unused_device_names"] = names;
    f.evidence["used_devices"] = static_cast<int64_t>(used.size());
    f.evidence["visible_devices"] = static_cast<int64_t>(visible);
    sink.report(std::move(f));
  }
};

}  // namespace

DetectorInfo unused_gpus_info() {
  return {"unused-gpus", {}, [](const OptionValues& o) { return std::make_unique<UnusedGpus>(o); }};
}

}  // namespace proflint
