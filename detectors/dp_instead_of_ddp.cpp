// detectors/dp_instead_of_ddp.cpp — dp-instead-of-ddp
// Flags single-process multi-GPU training with torch.nn.DataParallel: one Python process replicates
// the model, scatters inputs and gathers outputs every step and launches the kernels of every GPU
// under one GIL. DistributedDataParallel (one process per GPU) avoids all of it.
// Docs: docs/detectors/dp-instead-of-ddp.md
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "engine/analysis/detector.hpp"
#include "engine/common/format.hpp"
#include "engine/common/intervals.hpp"

namespace proflint {

namespace {

// Names DataParallel leaves in a trace. 'strong' ones exist only under DataParallel; the others are
// its autograd functions and helpers (torch/nn/parallel/_functions.py), which other code rarely uses.
// Scatter/Gather backward nodes are left out: before PyTorch 1.10 the backward of aten::gather and
// aten::scatter had the same names (GatherBackward, ScatterBackward).
constexpr const char* kMarkerQuery =
    "SELECT name, kind, count(*), sum(dur_ns), min(id) FROM range WHERE +trace_id = ? AND name_id IN (SELECT id FROM string WHERE"
    " value = 'DataParallel.forward' OR value LIKE 'nn.Module: DataParallel\\_%' ESCAPE '\\'"
    " OR value LIKE 'torch/nn/parallel/data\\_parallel.py(%' ESCAPE '\\'"
    " OR value LIKE 'torch/nn/parallel/replicate.py(%' OR value LIKE 'torch/nn/parallel/parallel\\_apply.py(%' ESCAPE '\\'"
    " OR value LIKE 'torch/nn/parallel/\\_functions.py(%' ESCAPE '\\'"
    " OR value IN ('BroadcastBackward', 'ReduceAddCoalescedBackward',"
    "  'autograd::engine::evaluate_function: BroadcastBackward', 'autograd::engine::evaluate_function: ReduceAddCoalescedBackward'))"
    " GROUP BY name, kind ORDER BY count(*) DESC, name";

bool strong_marker(const std::string& name) {
  return name == "DataParallel.forward" || name.rfind("nn.Module: DataParallel_", 0) == 0 ||
         name.rfind("torch/nn/parallel/data_parallel.py(", 0) == 0;
}

// Ranges that are DataParallel's own per-step machinery (not the replicas' compute): replicate,
// scatter and gather frames, and the backward of Broadcast/ReduceAddCoalesced/Scatter/Gather.
bool machinery(const std::string& name) {
  if (name.find("Backward") != std::string::npos) return true;
  if (name.rfind("torch/nn/parallel/replicate.py(", 0) == 0) return true;
  if (name.rfind("torch/nn/parallel/_functions.py(", 0) == 0) return true;
  if (name.rfind("torch/nn/parallel/data_parallel.py(", 0) == 0) {
    auto colon = name.rfind("): ");
    std::string fn = colon == std::string::npos ? "" : name.substr(colon + 3);
    return fn == "replicate" || fn == "scatter" || fn == "gather";
  }
  return false;
}

class DpInsteadOfDdp final : public Detector {
 public:
  explicit DpInsteadOfDdp(const OptionValues& o)
      : min_device_share_(o.number("min_device_share")), recoverable_fraction_(o.number("recoverable_fraction")) {}

  std::string_view id() const override { return "dp-instead-of-ddp"; }
  std::string_view title() const override { return "torch.nn.DataParallel used instead of DistributedDataParallel"; }
  std::vector<std::string> needs() const override { return {"gpu_activity", "multi_device"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* summary = facts.summary(trace_id);
    if (!summary || summary->devices.size() < 2) return;  // DataParallel over one GPU is a pass-through
    auto& db = facts.db();

    struct Marker {
      std::string name, kind;
      int64_t count, time, example;
    };
    std::vector<Marker> markers;
    bool strong = false;
    {
      SQLite::Statement q(db, kMarkerQuery);
      q.bind(1, trace_id);
      while (q.executeStep()) {
        markers.push_back({q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getInt64(), q.getColumn(3).getInt64(),
                           q.getColumn(4).getInt64()});
        strong = strong || strong_marker(markers.back().name);
      }
    }
    if (markers.empty()) return;

    // Which process launches work on which device (GPU time per device, by the launching call's process).
    std::map<int64_t, std::map<int64_t, int64_t>> by_pid;  // pid -> device -> GPU time
    std::map<int64_t, std::set<int64_t>> threads;          // pid -> launching threads
    {
      SQLite::Statement q(db,
          "SELECT a.pid, g.device_id, sum(g.dur_ns), group_concat(DISTINCT a.tid) FROM ("
          " SELECT api_call_id, device_id, dur_ns FROM kernel WHERE trace_id = ?1"
          " UNION ALL SELECT api_call_id, device_id, dur_ns FROM memcpy WHERE trace_id = ?1) g"
          " JOIN api_call a ON a.id = g.api_call_id WHERE g.device_id IS NOT NULL AND a.pid IS NOT NULL GROUP BY a.pid, g.device_id");
      q.bind(1, trace_id);
      while (q.executeStep()) {
        int64_t pid = q.getColumn(0).getInt64();
        by_pid[pid][q.getColumn(1).getInt64()] = q.getColumn(2).getInt64();
        std::string tids = q.getColumn(3).isNull() ? "" : q.getColumn(3).getString();
        size_t p = 0;
        while (p < tids.size()) {
          size_t c = tids.find(',', p);
          if (c == std::string::npos) c = tids.size();
          threads[pid].insert(std::stoll(tids.substr(p, c - p)));
          p = c + 1;
        }
      }
    }
    // The process driving the most devices, counting only devices with a real share of its GPU time
    // (a few mis-attributed launches must not make a process look multi-GPU).
    int64_t driver = -1;
    std::vector<std::pair<int64_t, int64_t>> driven;  // (device, time)
    for (const auto& [pid, devs] : by_pid) {
      int64_t total = 0;
      for (const auto& [d, t] : devs) total += t;
      std::vector<std::pair<int64_t, int64_t>> used;
      for (const auto& [d, t] : devs)
        if (total > 0 && static_cast<double>(t) >= min_device_share_ * static_cast<double>(total)) used.push_back({d, t});
      if (used.size() > driven.size()) {
        driver = pid;
        driven = used;
      }
    }
    const bool multi_device_process = driven.size() >= 2;
    // Without launch correlation, a strong marker and several active devices in the trace suffice.
    if (!multi_device_process && !(by_pid.empty() && strong)) return;

    // Busy time of the busiest device and DataParallel's own machinery on the host.
    int64_t busiest_busy = 0, busiest_device = -1;
    for (const auto& d : summary->devices)
      if (d.gpu_busy_ns > busiest_busy) {
        busiest_busy = d.gpu_busy_ns;
        busiest_device = d.device_id;
      }
    const int64_t idle_busiest = std::max<int64_t>(0, summary->wall_ns - busiest_busy);
    std::vector<Interval> mach;
    {
      SQLite::Statement q(db, kMarkerQuery);  // names only; the intervals come below
      q.bind(1, trace_id);
      std::vector<std::string> names;
      while (q.executeStep())
        if (machinery(q.getColumn(0).getString())) names.push_back(q.getColumn(0).getString());
      for (const auto& n : names) {
        SQLite::Statement r(db, "SELECT start_ns, end_ns FROM range WHERE trace_id = ? AND name = ? AND kind <> 'gpu_user_annotation'");
        r.bind(1, trace_id);
        r.bind(2, n);
        while (r.executeStep()) mach.push_back({r.getColumn(0).getInt64(), r.getColumn(1).getInt64()});
      }
    }
    const int64_t machinery_ns = total_length(union_intervals(std::move(mach)));
    const int64_t basis = machinery_ns > 0 ? std::min(machinery_ns, idle_busiest) : idle_busiest;

    std::string marker_text;
    for (size_t i = 0; i < markers.size() && i < 4; ++i)
      marker_text += fmt::format("{}{} ×{} ({})", marker_text.empty() ? "" : ", ", markers[i].name, markers[i].count, format_ns(markers[i].time));
    if (markers.size() > 4) marker_text += fmt::format(", … ({} more)", markers.size() - 4);
    std::string devices_text;
    if (multi_device_process) {
      for (const auto& [d, t] : driven) devices_text += fmt::format("{}GPU {} {}", devices_text.empty() ? "" : ", ", d, format_ns(t));
    } else {
      for (const auto& d : summary->devices) devices_text += fmt::format("{}GPU {}", devices_text.empty() ? "" : ", ", d.device_id);
    }

    Finding f = make_finding(FindingScope::of_trace(trace_id).over_iterations_seen(0, summary->iterations.count - 1));
    if (multi_device_process)
      f.problem = fmt::format(
          "One process (pid {}) launches the GPU work of {} devices ({} of GPU time) from {} thread(s), and the trace shows "
          "torch.nn.DataParallel: {}. Every step DataParallel replicates the model from GPU {} to the others, scatters the inputs "
          "and gathers the outputs back, and all replicas share one Python interpreter and its GIL to launch their kernels.",
          driver, driven.size(), devices_text, threads[driver].size(), marker_text, driven.front().first);
    else
      f.problem = fmt::format(
          "The trace shows torch.nn.DataParallel ({}) driving {} GPUs ({}) from one process. Every step it replicates the model, "
          "scatters the inputs and gathers the outputs on the first GPU, and all replicas share one GIL to launch their kernels.",
          marker_text, summary->devices.size(), devices_text);
    if (machinery_ns > 0)
      f.problem += fmt::format(" Replicate/scatter/gather and their backward took {} of host time.", format_ns(machinery_ns));
    f.problem += fmt::format(" The busiest GPU ({}) was idle {} of the {} window.", busiest_device, format_ns(idle_busiest),
                             format_ns(summary->wall_ns));
    f.recommendation =
        "Use DistributedDataParallel with one process per GPU: launch with `torchrun --nproc_per_node=<gpus> train.py`; in the "
        "script call torch.distributed.init_process_group('nccl'), torch.cuda.set_device(local_rank), wrap "
        "`model = DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])` and shard the data with "
        "DataLoader(..., sampler=DistributedSampler(dataset)). Each process then has its own GIL and launches only its GPU's "
        "kernels, gradients are all-reduced by NCCL while backward still runs, and nothing is replicated, scattered or gathered "
        "per step (GPU 0 no longer holds every output and the loss). The PyTorch documentation recommends DDP over DataParallel "
        "even on a single machine. TensorFlow: tf.distribute.MirroredStrategy (one replica per GPU, NCCL all-reduce).";
    f.estimated_savings_ns = static_cast<int64_t>(static_cast<double>(basis) * recoverable_fraction_);
    f.savings_method = fmt::format(
        "{} x {:.2f} (option recoverable_fraction): DDP removes DataParallel's per-step work, which cannot save more than the "
        "time the busiest GPU is idle",
        machinery_ns > 0 ? "min(host time in replicate/scatter/gather and their backward, idle time of the busiest GPU)"
                         : "idle time of the busiest GPU",
        recoverable_fraction_);
    f.confidence = strong && multi_device_process ? 0.8 : 0.6;
    nlohmann::ordered_json mk = nlohmann::ordered_json::array();
    for (const auto& m : markers) mk.push_back(fmt::format("{} [{}] ×{} ({})", m.name, m.kind, m.count, format_ns(m.time)));
    f.evidence["markers"] = mk;
    f.evidence["example_range_id"] = markers.front().example;
    if (multi_device_process) {
      f.evidence["pid"] = driver;
      f.evidence["devices"] = driven.size();
      f.evidence["launching_threads"] = threads[driver].size();
    }
    f.evidence["machinery_ns"] = machinery_ns;
    f.evidence["busiest_device"] = busiest_device;
    f.evidence["busiest_idle_ns"] = idle_busiest;
    sink.report(std::move(f));
  }

 private:
  double min_device_share_;
  double recoverable_fraction_;
};

}  // namespace

DetectorInfo dp_instead_of_ddp_info() {
  return {"dp-instead-of-ddp",
          {{"min_device_share", 0.1, "a device counts as driven by a process when it gets at least this share of the process's GPU time"},
           {"recoverable_fraction", 0.5, "share of the DataParallel overhead assumed recoverable by switching to DDP"}},
          [](const OptionValues& o) { return std::make_unique<DpInsteadOfDdp>(o); }};
}

}  // namespace proflint
