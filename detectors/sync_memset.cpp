// detectors/sync_memset.cpp — sync-memset
// Flags synchronous memsets (cudaMemset* without Async on pinned or managed memory, which CUDA runs
// fully synchronously) that block the host while no kernel runs on the GPU.
// Docs: docs/detectors/sync-memset.md
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/source_sites.hpp"
#include "engine/common/format.hpp"
#include "engine/common/intervals.hpp"

namespace proflint {

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct Set {
  int64_t memset_id, device, bytes, api_start, api_end;
  std::string api, mem_kind, op;
  std::optional<int64_t> iteration;
  int64_t exposed = 0;
};

class SyncMemset final : public Detector {
 public:
  explicit SyncMemset(const OptionValues& o)
      : min_share_(o.number("min_share")),
        min_exposed_ns_(o.integer("min_exposed_ns")),
        recoverable_fraction_(o.number("recoverable_fraction")) {}

  std::string_view id() const override { return "sync-memset"; }
  std::string_view title() const override { return "Synchronous memsets block the host"; }
  std::vector<std::string> needs() const override { return {"gpu_activity", "api_calls"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* summary = facts.summary(trace_id);
    if (!summary || summary->wall_ns <= 0) return;
    // nsys cuda_memset_sync: memsets launched by cudaMemset* without Async whose target is pinned or
    // managed memory (CUDA runs those fully synchronously; device-memory targets return at once).
    SQLite::Statement q(facts.db(),
        "SELECT s.id, coalesce(s.device_id, 0), coalesce(s.bytes, 0), a.start_ns, a.end_ns, a.name, s.mem_kind, "
        "coalesce(os.value, ''), a.iteration FROM memset s JOIN api_call a ON a.id = s.api_call_id "
        "LEFT JOIN _op o ON o.id = a.op_id LEFT JOIN string os ON os.id = o.name_id WHERE s.trace_id = ? AND s.mem_kind IN ('pinned', 'managed') ORDER BY a.start_ns, s.id");
    q.bind(1, trace_id);
    std::vector<Set> sets;
    while (q.executeStep()) {
      std::string api = lower(q.getColumn(5).getString());
      if (api.find("memset") == std::string::npos || api.find("async") != std::string::npos) continue;
      Set s{q.getColumn(0).getInt64(), q.getColumn(1).getInt64(), q.getColumn(2).getInt64(), q.getColumn(3).getInt64(),
            q.getColumn(4).getInt64(), q.getColumn(5).getString(), q.getColumn(6).getString(), q.getColumn(7).getString(),
            std::nullopt, 0};
      if (!q.getColumn(8).isNull()) s.iteration = q.getColumn(8).getInt64();
      sets.push_back(std::move(s));
    }
    if (sets.empty()) return;

    std::map<int64_t, std::vector<Interval>> kernels;
    SQLite::Statement k(facts.db(), "SELECT coalesce(device_id, 0), start_ns, start_ns + dur_ns FROM _kernel WHERE trace_id = ?");
    k.bind(1, trace_id);
    while (k.executeStep()) kernels[k.getColumn(0).getInt64()].push_back({k.getColumn(1).getInt64(), k.getColumn(2).getInt64()});
    for (auto& [d, v] : kernels) v = union_intervals(std::move(v));

    std::map<int64_t, std::vector<const Set*>> by_device;
    for (auto& s : sets) {
      Interval blocked{s.api_start, s.api_end};
      auto it = kernels.find(s.device);
      s.exposed = blocked.length() - (it == kernels.end() ? 0 : length_within(it->second, blocked));
      by_device[s.device].push_back(&s);
    }
    const double wall = static_cast<double>(summary->wall_ns);
    for (const auto& [device, list] : by_device) {
      int64_t exposed = 0, blocked = 0, bytes = 0, first = INT64_MAX, last = -1;
      std::map<std::string, int64_t> apis, kinds, ops;
      for (const Set* s : list) {
        exposed += s->exposed;
        blocked += s->api_end - s->api_start;
        bytes += s->bytes;
        ++apis[s->api];
        ++kinds[s->mem_kind];
        if (!s->op.empty()) ++ops[s->op];
        if (s->iteration) {
          first = std::min(first, *s->iteration);
          last = std::max(last, *s->iteration);
        }
      }
      if (exposed < min_exposed_ns_ || static_cast<double>(exposed) < min_share_ * wall) {
        bool by_ns = exposed < min_exposed_ns_;
        sink.below_threshold(checked_below(*this, trace_id, device, "host-blocked memset time with no kernel running",
                                           by_ns ? static_cast<double>(exposed) : static_cast<double>(exposed) / wall,
                                           by_ns ? static_cast<double>(min_exposed_ns_) : min_share_,
                                           by_ns ? "ns" : "share of wall time"));
        continue;
      }
      auto join = [](const std::map<std::string, int64_t>& m) {
        std::string s;
        for (const auto& [name, n] : m) s += fmt::format("{}{} ×{}", s.empty() ? "" : ", ", name, n);
        return s;
      };
      Finding f = make_finding(FindingScope::of_trace(trace_id).on_device(device).over_iterations_seen(first, last));
      f.problem = fmt::format(
          "{} synchronous memsets ({}) of {} in pinned/managed host memory ({}) for GPU {} blocked the host {} ({} of "
          "wall time); for {} ({}) of it no kernel ran on the GPU.",
          list.size(), join(apis), format_bytes(bytes), join(kinds), device, format_ns(blocked),
          format_percent(static_cast<double>(blocked) / wall), format_ns(exposed), format_percent(static_cast<double>(exposed) / wall));
      f.recommendation =
          "Use the asynchronous variant on a stream: cudaMemsetAsync(ptr, value, bytes, stream) (driver API "
          "cuMemsetD8Async/D32Async), and wait with an event only where the host reads the memory. Better, clear device "
          "buffers instead of pinned/managed host memory. PyTorch: torch.zero_()/fill_() on CUDA tensors is already "
          "asynchronous; this pattern comes from custom CUDA extensions or libraries.";
      f.estimated_savings_ns = static_cast<int64_t>(recoverable_fraction_ * static_cast<double>(exposed));
      f.savings_method = fmt::format(
          "host time blocked in synchronous memsets while no kernel ran on the GPU x {:.2f} (recoverable_fraction: the part "
          "an asynchronous memset returns to the host)",
          recoverable_fraction_);
      f.confidence = 0.5;
      f.evidence["device_id"] = device;
      f.evidence["memsets"] = static_cast<int64_t>(list.size());
      f.evidence["bytes"] = bytes;
      f.evidence["host_blocked_ns"] = blocked;
      f.evidence["exposed_ns"] = exposed;
      f.evidence["apis"] = join(apis);
      f.evidence["memory_kinds"] = join(kinds);
      if (!ops.empty()) f.evidence["ops"] = join(ops);
      f.evidence["example_memset_id"] = list.front()->memset_id;
      SourceSites sites(facts, trace_id, "host blocked");
      for (const Set* s : list) sites.add_memset(s->memset_id, s->api_end - s->api_start);
      attach_locations(f, sites.top(5));
      sink.report(std::move(f));
    }
  }

 private:
  double min_share_;
  int64_t min_exposed_ns_;
  double recoverable_fraction_;
};

}  // namespace

DetectorInfo sync_memset_info() {
  return {"sync-memset",
          {{"min_share", 0.002, "report when host time blocked in synchronous memsets (no kernel running) is at least this share of wall time"},
           {"min_exposed_ns", 100000, "and at least this long in total (ns)"},
           {"recoverable_fraction", 0.8, "share of that blocked time an asynchronous memset gives back to the host"}},
          [](const OptionValues& o) { return std::make_unique<SyncMemset>(o); }};
}

}  // namespace proflint
