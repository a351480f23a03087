// detectors/pageable_memcpy.cpp — pageable-memcpy
// Flags host<->device copies from/to pageable (not pinned) host memory: the driver stages them
// through a pinned bounce buffer, they run slower and cannot overlap with compute.
// Docs: docs/detectors/pageable-memcpy.md
#include <fmt/format.h>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/source_sites.hpp"
#include "engine/common/format.hpp"

namespace proflint {

namespace {

class PageableMemcpy final : public Detector {
 public:
  explicit PageableMemcpy(const OptionValues& o)
      : min_share_(o.number("min_share")), pinned_speedup_(o.number("pinned_speedup")) {}

  std::string_view id() const override { return "pageable-memcpy"; }
  std::string_view title() const override { return "Copies use pageable host memory"; }
  std::vector<std::string> needs() const override { return {"memcpy"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* summary = facts.summary(trace_id);
    SQLite::Statement q(facts.db(),
        "SELECT device_id, kind, count(*), sum(dur_ns), sum(bytes), min(id) FROM memcpy "
        "WHERE trace_id = ? AND kind IN ('htod', 'dtoh') AND (src_kind = 'pageable' OR dst_kind = 'pageable') "
        "GROUP BY device_id, kind ORDER BY device_id, kind");
    q.bind(1, trace_id);
    struct Group { int64_t device; std::string kind; int64_t count, dur, bytes, example; };
    std::vector<Group> groups;
    while (q.executeStep())
      groups.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(), q.getColumn(2).getInt64(),
                        q.getColumn(3).getInt64(), q.getColumn(4).getInt64(), q.getColumn(5).getInt64()});
    std::map<int64_t, std::vector<Group>> by_device;
    for (auto& g : groups) by_device[g.device].push_back(g);
    for (const auto& [device, list] : by_device) {
      int64_t count = 0, dur = 0, bytes = 0;
      std::string parts;
      for (const auto& g : list) {
        count += g.count;
        dur += g.dur;
        bytes += g.bytes;
        parts += fmt::format("{}{} {} ({}, {})", parts.empty() ? "" : "; ", g.count, g.kind == "htod" ? "host-to-device" : "device-to-host",
                             format_bytes(g.bytes), format_ns(g.dur));
      }
      if (summary->wall_ns <= 0) continue;
      if (static_cast<double>(dur) < min_share_ * static_cast<double>(summary->wall_ns)) {
        sink.below_threshold(checked_below(*this, trace_id, device, "pageable copy time",
                                           static_cast<double>(dur) / static_cast<double>(summary->wall_ns), min_share_,
                                           "share of wall time"));
        continue;
      }
      Finding f = make_finding(FindingScope::of_trace(trace_id).on_device(device));
      f.problem = fmt::format("{} copies between pageable host memory and GPU {} took {} ({} of wall time): {}.", count, device,
                              format_ns(dur), format_percent(static_cast<double>(dur) / static_cast<double>(summary->wall_ns)), parts);
      f.recommendation =
          "Pin the host buffers: in PyTorch use DataLoader(..., pin_memory=True) and move batches with "
          ".to(device, non_blocking=True) (or tensor.pin_memory() for tensors you build yourself); in CUDA code "
          "allocate with cudaHostAlloc/cudaMallocHost or register existing buffers with cudaHostRegister.";
      // Pinned copies run at full PCIe/NVLink speed and can overlap compute; the part of the copy time
      // above the pinned time is what pinning recovers.
      f.estimated_savings_ns = static_cast<int64_t>(static_cast<double>(dur) * (1.0 - 1.0 / pinned_speedup_));
      f.savings_method = fmt::format("pageable copy time x (1 - 1/{:.1f}), the typical speed-up of pinned over pageable copies", pinned_speedup_);
      // Each copy's own part of the estimate: sync-memcpy claims the same copies, and ranking counts
      // a copy's saving once.
      {
        SQLite::Statement c(facts.db(),
            "SELECT id, dur_ns FROM memcpy WHERE trace_id = ? AND device_id IS ? AND kind IN ('htod', 'dtoh') "
            "AND (src_kind = 'pageable' OR dst_kind = 'pageable')");
        c.bind(1, trace_id);
        c.bind(2, device);
        std::vector<int64_t> ids, durs;
        SourceSites sites(facts, trace_id, "copy time");
        while (c.executeStep()) {
          ids.push_back(c.getColumn(0).getInt64());
          durs.push_back(c.getColumn(1).getInt64());
          sites.add_memcpy(ids.back(), durs.back());
        }
        claim_in_proportion(f, "memcpy", ids, durs);
        attach_locations(f, sites.top(5));
      }
      f.confidence = 0.6;
      f.evidence["copies"] = count;
      f.evidence["bytes"] = bytes;
      f.evidence["copy_time_ns"] = dur;
      f.evidence["example_memcpy_id"] = list.front().example;
      sink.report(std::move(f));
    }
  }

 private:
  double min_share_;
  double pinned_speedup_;
};

}  // namespace

DetectorInfo pageable_memcpy_info() {
  return {"pageable-memcpy",
          {{"min_share", 0.002, "report when pageable copies take at least this share of wall time"},
           {"pinned_speedup", 2.0, "assumed speed-up of a pinned copy over a pageable one"}},
          [](const OptionValues& o) { return std::make_unique<PageableMemcpy>(o); }};
}

}  // namespace proflint
