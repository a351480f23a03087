// detectors/memcpy_bound.cpp — memcpy-bound
// Flags devices where memory copies (host<->device, peer, device<->device) take a large share of
// the window while no kernel runs: the job waits on transfers, not on compute.
// Docs: docs/detectors/memcpy-bound.md
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/source_sites.hpp"
#include "engine/common/format.hpp"
#include "engine/common/intervals.hpp"

namespace proflint {

namespace {

// 2020 -> "2,020".
std::string count_text(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

// Bytes in binary units (as the rest of proflint prints them) and decimal GB, the unit of link speeds.
std::string bytes_text(int64_t bytes) {
  if (bytes >= 1000000000) return fmt::format("{} ({:.1f} GB)", format_bytes(bytes), static_cast<double>(bytes) / 1e9);
  return format_bytes(bytes);
}

std::string direction_text(const std::string& kind) {
  if (kind == "htod") return "host-to-device";
  if (kind == "dtoh") return "device-to-host";
  if (kind == "dtod") return "device-to-device";
  if (kind == "ptop") return "peer-to-peer";
  if (kind == "htoh") return "host-to-host";
  if (kind.rfind("uvm_", 0) == 0) return "unified-memory " + kind.substr(4);
  return kind + " (kind unknown)";
}

bool host_link(const std::string& kind) { return kind == "htod" || kind == "dtoh" || kind.rfind("uvm_", 0) == 0; }

struct Direction {
  std::string kind;
  int64_t count = 0, time = 0, bytes = 0, pinned = 0, pageable = 0, example = 0;
  std::map<int64_t, std::pair<int64_t, int64_t>> sizes;  // bytes -> (count, time)
};

class MemcpyBound final : public Detector {
 public:
  explicit MemcpyBound(const OptionValues& o)
      : min_exposed_share_(o.number("min_exposed_share")),
        recoverable_fraction_(o.number("recoverable_fraction")),
        min_busy_share_(o.number("min_busy_share")),
        link_gbps_(o.number("link_gbps")),
        near_link_(o.number("near_link_fraction")) {}

  std::string_view id() const override { return "memcpy-bound"; }
  std::string_view title() const override { return "Memory transfers dominate the GPU timeline"; }
  std::vector<std::string> needs() const override { return {"memcpy"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* summary = facts.summary(trace_id);
    if (!summary) return;
    for (const auto& ds : summary->devices) {
      if (ds.window_ns <= 0 || ds.memcpy_count == 0) continue;
      auto it = ds.breakdown_ns.find("memcpy");
      // The breakdown's 'memcpy' is copy time with no kernel running on the device (kernels rank above copies).
      const int64_t exposed = it == ds.breakdown_ns.end() ? 0 : it->second;
      const double exposed_share = static_cast<double>(exposed) / static_cast<double>(ds.window_ns);
      if (exposed_share < min_exposed_share_) {
        sink.below_threshold(checked_below(*this, trace_id, ds.device_id, "copy time with no kernel running",
                                           exposed_share, min_exposed_share_, "share of the GPU's window"));
        continue;
      }
      // Transfers must also be a large part of what the GPU does, not a side cost of a busy GPU.
      if (ds.gpu_busy_ns <= 0 || static_cast<double>(exposed) < min_busy_share_ * static_cast<double>(ds.gpu_busy_ns)) continue;
      report_device(facts, *summary, ds, exposed, exposed_share, sink);
    }
  }

 private:
  // Practical per-direction bandwidth of the host link (x16), from the GPU generation; 0 when unknown.
  double expected_link_gbps(const Facts& facts, int64_t trace_id, int64_t device, std::string& link) const {
    if (link_gbps_ > 0) {
      link = "the configured link";
      return link_gbps_;
    }
    SQLite::Statement q(facts.db(), "SELECT vendor, compute_major, compute_minor FROM device WHERE trace_id = ? AND device_id = ?");
    q.bind(1, trace_id);
    q.bind(2, device);
    if (!q.executeStep() || q.getColumn(1).isNull()) return 0;
    std::string vendor = q.getColumn(0).isNull() ? "" : q.getColumn(0).getString();
    int major = q.getColumn(1).getInt(), minor = q.getColumn(2).isNull() ? 0 : q.getColumn(2).getInt();
    int gen = 0;
    if (vendor == "amd") gen = major == 9 && minor >= 4 ? 5 : 4;  // MI300 (gfx94x) PCIe 5, MI200 PCIe 4
    else if (major >= 9) gen = 5;                                 // Hopper, Blackwell
    else if (major == 8) gen = 4;                                 // Ampere, Ada
    else if (major >= 6) gen = 3;                                 // Pascal, Volta, Turing
    if (gen == 0) return 0;
    link = fmt::format("PCIe gen{} x16", gen);
    return gen == 5 ? 50.0 : gen == 4 ? 25.0 : 12.0;
  }

  void report_device(const Facts& facts, const TraceSummary& summary, const DeviceSummary& ds, int64_t exposed,
                     double exposed_share, FindingSink& sink) const {
    auto& db = facts.db();
    std::map<std::string, Direction> dirs;
    std::vector<Interval> copies;
    SourceSites sites(facts, summary.trace_id, "copy time");  // where the copies are issued
    {
      SQLite::Statement q(db,
          "SELECT id, kind, src_kind, dst_kind, start_ns, end_ns, dur_ns, coalesce(bytes, 0) FROM memcpy "
          "WHERE trace_id = ? AND device_id = ? ORDER BY start_ns, id");
      q.bind(1, summary.trace_id);
      q.bind(2, ds.device_id);
      while (q.executeStep()) {
        std::string kind = q.getColumn(1).getString();
        auto& d = dirs[kind];
        d.kind = kind;
        if (d.count == 0) d.example = q.getColumn(0).getInt64();
        ++d.count;
        int64_t dur = q.getColumn(6).getInt64(), bytes = q.getColumn(7).getInt64();
        sites.add_memcpy(q.getColumn(0).getInt64(), dur);
        d.time += dur;
        d.bytes += bytes;
        auto src = q.getColumn(2).isNull() ? "" : q.getColumn(2).getString();
        auto dst = q.getColumn(3).isNull() ? "" : q.getColumn(3).getString();
        if (src == "pinned" || dst == "pinned") ++d.pinned;
        if (src == "pageable" || dst == "pageable") ++d.pageable;
        auto& s = d.sizes[bytes];
        ++s.first;
        s.second += dur;
        copies.push_back({q.getColumn(4).getInt64(), q.getColumn(5).getInt64()});
      }
    }
    if (copies.empty()) return;
    copies = union_intervals(std::move(copies));
    const int64_t copy_busy = total_length(copies);
    std::vector<Interval> kernels;
    {
      SQLite::Statement q(db, "SELECT start_ns, end_ns FROM kernel WHERE trace_id = ? AND device_id = ? AND end_ns > ? AND start_ns < ?");
      q.bind(1, summary.trace_id);
      q.bind(2, ds.device_id);
      q.bind(3, copies.front().start);
      q.bind(4, copies.back().end);
      while (q.executeStep()) kernels.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64()});
    }
    const int64_t overlapped = total_length(intersect_intervals(copies, union_intervals(std::move(kernels))));
    const double idle_while_copying = copy_busy > 0 ? 1.0 - static_cast<double>(overlapped) / static_cast<double>(copy_busy) : 0.0;

    std::vector<const Direction*> order;
    for (const auto& [k, d] : dirs) order.push_back(&d);
    std::sort(order.begin(), order.end(), [](const Direction* a, const Direction* b) { return a->time > b->time || (a->time == b->time && a->kind < b->kind); });
    const Direction& top = *order.front();

    std::string link;
    const double expected = expected_link_gbps(facts, summary.trace_id, ds.device_id, link);
    const int64_t iterations = summary.iterations.count;

    std::string parts;
    for (const auto* d : order) {
      if (d->time * 100 < top.time && d != order.front() && d->bytes * 100 < top.bytes) continue;  // negligible
      // Host memory kind: all pinned / all pageable, or the count of each when mixed.
      std::string memory;
      if (host_link(d->kind) && d->pinned + d->pageable > 0) {
        if (d->pinned == d->count) memory = " (all pinned)";
        else if (d->pageable == d->count) memory = " (all pageable)";
        else memory = fmt::format(" ({} pinned, {} pageable)", count_text(d->pinned), count_text(d->pageable));
      }
      parts += fmt::format("{}{} {} copies{} moved {} in {}", parts.empty() ? "" : "; ", count_text(d->count), direction_text(d->kind), memory,
                           bytes_text(d->bytes), format_ns(d->time));
      if (d->time > 0 && d->bytes > 0) parts += fmt::format(" at {:.1f} GB/s", static_cast<double>(d->bytes) / static_cast<double>(d->time));
    }

    Finding f = make_finding(FindingScope::of_trace(summary.trace_id)
                                 .on_device(ds.device_id)
                                 .of_rank(summary.rank)
                                 .over_iterations_seen(0, iterations - 1));
    f.problem = fmt::format(
        "GPU {} spent {} of the {} window ({}, and {} of its busy time) copying memory with no kernel running; kernels ran "
        "during only {} of its copy time. {}.",
        ds.device_id, format_ns(exposed), format_ns(ds.window_ns), format_percent(exposed_share),
        format_percent(static_cast<double>(exposed) / static_cast<double>(ds.gpu_busy_ns)), format_percent(1.0 - idle_while_copying), parts);

    const bool host_bound = host_link(top.kind);
    double achieved = top.time > 0 ? static_cast<double>(top.bytes) / static_cast<double>(top.time) : 0.0;
    if (host_bound) {
      if (expected > 0)
        f.problem += fmt::format(" The {} copies reach {} of the ~{:.0f} GB/s a {} link delivers per direction{}.", direction_text(top.kind),
                                 format_percent(achieved / expected), expected, link,
                                 achieved >= near_link_ * expected ? ": the link is saturated, only moving fewer bytes helps" : "");
      else
        f.problem += fmt::format(" {:.1f} GB/s per direction compares with ~12, ~25 and ~50 GB/s for PCIe gen3, gen4 and gen5 x16 links.", achieved);
    }
    // The same sizes every step: the same tensors travel again and again.
    std::vector<std::pair<int64_t, int64_t>> repeated;  // (count, bytes)
    for (const auto& [bytes, cs] : top.sizes)
      if (cs.first >= 2 && bytes >= (1 << 20)) repeated.push_back({cs.first, bytes});
    std::sort(repeated.begin(), repeated.end(), [](auto a, auto b) { return a.first * a.second > b.first * b.second; });
    int64_t repeated_bytes = 0;
    std::string sizes_text;
    for (size_t i = 0; i < repeated.size(); ++i) {
      repeated_bytes += repeated[i].first * repeated[i].second;
      if (i < 3) sizes_text += fmt::format("{}{} x {}", sizes_text.empty() ? "" : ", ", count_text(repeated[i].first), format_bytes(repeated[i].second));
    }
    const bool repeats = top.bytes > 0 && repeated_bytes * 2 >= top.bytes;
    if (repeats)
      f.problem += fmt::format(" The same sizes recur ({}{}): unless these are the input batches, the same tensors (weights, optimizer "
                               "state or activations kept on the host) travel again and again.",
                               sizes_text, repeated.size() > 3 ? ", …" : "");
    if (iterations > 0)
      f.problem += fmt::format(" Per iteration: {} in {}.", bytes_text(top.bytes / iterations), format_ns(top.time / iterations));

    // Copies issued inside FSDP's pre-forward/pre-backward hooks or an offload wrapper: parameters kept on the host.
    int64_t offload_ns = 0;
    std::string offload_where;
    if (host_bound) {
      SQLite::Statement q(db,
          "SELECT sum(m.dur_ns), max(CASE WHEN o.path LIKE '%FSDP::%' THEN 'FSDP' ELSE 'offload' END) FROM memcpy m "
          "JOIN op o ON o.id = m.op_id WHERE m.trace_id = ? AND m.device_id = ? AND m.kind = ? "
          "AND (o.path LIKE '%FSDP::%' OR o.path LIKE '%offload%')");
      q.bind(1, summary.trace_id);
      q.bind(2, ds.device_id);
      q.bind(3, top.kind);
      if (q.executeStep() && !q.getColumn(0).isNull()) {
        offload_ns = q.getColumn(0).getInt64();
        offload_where = q.getColumn(1).getString();
      }
    }
    const bool offload = top.time > 0 && offload_ns * 5 >= top.time;
    if (offload)
      f.problem += offload_where == "FSDP"
                       ? fmt::format(" {} of the {} time ({}) is issued inside FSDP hooks (FSDP::pre_forward …): FSDP moves "
                                     "parameters kept on the CPU to the GPU before each use (CPU offload).",
                                     format_percent(static_cast<double>(offload_ns) / static_cast<double>(top.time)), direction_text(top.kind),
                                     format_ns(offload_ns))
                       : fmt::format(" {} of the {} time ({}) is issued inside ops named after offloading.",
                                     format_percent(static_cast<double>(offload_ns) / static_cast<double>(top.time)), direction_text(top.kind),
                                     format_ns(offload_ns));

    // Which ops issue the copies.
    nlohmann::ordered_json top_ops = nlohmann::ordered_json::array();
    {
      SQLite::Statement q(db,
          "SELECT coalesce(o.name, '(no op)'), count(*), sum(m.dur_ns), sum(coalesce(m.bytes, 0)) FROM memcpy m LEFT JOIN op o ON o.id = m.op_id "
          "WHERE m.trace_id = ? AND m.device_id = ? GROUP BY 1 ORDER BY 3 DESC, 1 LIMIT 5");
      q.bind(1, summary.trace_id);
      q.bind(2, ds.device_id);
      while (q.executeStep())
        top_ops.push_back(fmt::format("{} ×{} ({}, {})", q.getColumn(0).getString(), q.getColumn(1).getInt64(),
                                      format_ns(q.getColumn(2).getInt64()), format_bytes(q.getColumn(3).getInt64())));
    }

    std::string rec;
    if (host_bound) {
      rec = "Keep data and weights resident on the GPU: move the model and any constant tensors to the device once, outside the "
            "training loop, and avoid `.to(device)`/`.cuda()`/`.cpu()` of large tensors every step (check CPU offload: FSDP "
            "CPUOffload(offload_params=True), DeepSpeed offload_optimizer/offload_param, accelerate device_map='auto' or "
            "enable_model_cpu_offload() re-upload weights every step; turn them off when the model fits in GPU memory). When a "
            "transfer is needed, overlap it with compute: pinned host memory (tensor.pin_memory(), DataLoader(pin_memory=True)) "
            "plus `.to(device, non_blocking=True)` issued on a side stream (`with torch.cuda.stream(copy_stream):`, then "
            "torch.cuda.current_stream().wait_stream(copy_stream)) one step ahead. Send fewer bytes: transfer uint8/bf16 and "
            "convert on the GPU, or decode/augment on the GPU (NVIDIA DALI, torchvision.io.decode_jpeg(device='cuda')). "
            "TensorFlow: keep variables on the GPU and use tf.data prefetch_to_device. CUDA: cudaMemcpyAsync from "
            "cudaHostAlloc'ed buffers on a separate stream.";
    } else if (top.kind == "ptop") {
      rec = "Peer copies between GPUs are slow when they go over PCIe or through host memory: check `nvidia-smi topo -m` for NVLink "
            "between these GPUs and that peer access is enabled (torch.cuda.can_device_access_peer); better, keep each "
            "model replica's data on its own GPU (DistributedDataParallel, one process per GPU) instead of moving tensors "
            "between devices every step.";
    } else {
      rec = "The device-to-device copies come from materialising tensors: avoid `.clone()`, `.contiguous()` and `torch.cat` on "
            "large tensors in the step (preallocate and write into slices, use views, keep one memory format with "
            "`model.to(memory_format=torch.channels_last)`), and fuse the surrounding ops with torch.compile(model).";
    }
    f.recommendation = rec;

    f.estimated_savings_ns = static_cast<int64_t>(static_cast<double>(exposed) * recoverable_fraction_);
    f.savings_method = fmt::format(
        "copy time with no kernel running on the device x {:.2f}, the share assumed recoverable by keeping data resident, overlapping "
        "copies with compute or moving fewer bytes (option recoverable_fraction)",
        recoverable_fraction_);
    f.confidence = 0.6;
    f.evidence["exposed_copy_ns"] = exposed;
    f.evidence["exposed_share"] = exposed_share;
    f.evidence["window_ns"] = ds.window_ns;
    f.evidence["copy_busy_ns"] = copy_busy;
    f.evidence["overlapped_with_kernels_ns"] = overlapped;
    nlohmann::ordered_json by_dir = nlohmann::ordered_json::object();
    for (const auto* d : order) {
      nlohmann::ordered_json j;
      j["copies"] = d->count;
      j["bytes"] = d->bytes;
      j["time_ns"] = d->time;
      j["gbps"] = d->time > 0 ? static_cast<double>(d->bytes) / static_cast<double>(d->time) : 0.0;
      j["pinned"] = d->pinned;
      j["pageable"] = d->pageable;
      j["example_memcpy_id"] = d->example;
      by_dir[d->kind] = j;
    }
    f.evidence["by_direction"] = by_dir;
    if (expected > 0 && host_bound) f.evidence["expected_link_gbps"] = expected;
    if (repeats) f.evidence["repeated_sizes"] = sizes_text;
    if (offload) f.evidence["offload_copy_ns"] = offload_ns;
    if (iterations > 0) f.evidence["bytes_per_iteration"] = top.bytes / iterations;
    f.evidence["top_ops"] = top_ops;
    f.evidence["example_memcpy_id"] = top.example;
    attach_locations(f, sites.top(5));
    sink.report(std::move(f));
  }

  double min_exposed_share_;
  double recoverable_fraction_;
  double min_busy_share_;
  double link_gbps_;
  double near_link_;
};

}  // namespace

DetectorInfo memcpy_bound_info() {
  return {"memcpy-bound",
          {{"min_exposed_share", 0.10, "report when copies with no kernel running take at least this share of the device's window"},
           {"min_busy_share", 0.3, "... and at least this share of the device's busy time (kernels, copies, memsets)"},
           {"recoverable_fraction", 0.5, "share of the exposed copy time assumed recoverable"},
           {"link_gbps", 0, "per-direction bandwidth of the host link in GB/s; 0 = from the GPU generation (PCIe gen3/4/5 x16: 12/25/50)"},
           {"near_link_fraction", 0.7, "achieved/expected bandwidth above which the link counts as saturated"}},
          [](const OptionValues& o) { return std::make_unique<MemcpyBound>(o); }};
}

}  // namespace proflint
