// detectors/gpu_idle_gaps.cpp — gpu-idle-gaps
// Flags long stretches where a GPU runs nothing at all (no kernel, copy or memset) between its first
// and last work, and says what the host was doing meanwhile. Docs: docs/detectors/gpu-idle-gaps.md
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <range/v3/view/enumerate.hpp>
#include <range/v3/view/take.hpp>
#include <set>
#include <string>
#include <vector>

#include "engine/analysis/dataloader_ranges.hpp"
#include "engine/analysis/detector.hpp"
#include "engine/analysis/idle_claims.hpp"
#include "engine/common/format.hpp"
#include "engine/common/intervals.hpp"

namespace proflint {

namespace {

struct Gap {
  int64_t start = 0, end = 0;
  int64_t dataloader = 0;  // part covered by DataLoader fetches (dataloader-stall's)
  std::optional<int64_t> iteration;
  std::string host;   // what the host was doing
  std::string cause;  // a short classification of `host`
  int64_t length() const { return end - start; }
  int64_t counted() const { return length() - dataloader; }
};

bool has(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

// A coarse reading of the host activity that spans a gap.
std::string cause_of(const std::string& api, const std::string& range) {
  if (has(api, "Synchronize")) return "host waiting in a synchronization (see host-sync)";
  if (has(api, "Malloc") || has(api, "Free") || has(api, "HostAlloc") || has(api, "HostRegister"))
    return "memory allocation/free (caching-allocator misses, empty_cache, pinned buffer registration)";
  if (has(api, "EventCreate") || has(api, "StreamCreate") || has(api, "ModuleLoad") || has(api, "GetStreamPriority") ||
      has(api, "cuInit") || has(api, "DevicePrimaryCtx"))
    return "CUDA initialisation / lazy loading (warm-up inside the capture)";
  if (has(api, "Memcpy")) return "host waiting in a memory copy";
  if (has(api, "Launch")) return "a kernel launch that blocked (module loading on first use, or a full launch queue)";
  std::string r = range;
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (has(r, "save") || has(r, "checkpoint") || has(r, "serializ")) return "checkpoint saving";
  if (has(r, "optimizer")) return "optimizer running on the host";
  if (has(r, "nccl") || has(r, "gloo") || has(r, "all_reduce") || has(r, "barrier") || has(r, "mpi_"))
    return "communication / collective wait";
  if (has(r, "eval") || has(r, "valid")) return "evaluation / validation loop";
  if (has(r, "decode") || has(r, "video") || has(r, "image") || has(r, "transform") || has(r, "resize") ||
      has(r, "preprocess") || has(r, "tokeniz") || has(r, "augment"))
    return "input preprocessing on the host (move it to DataLoader workers or the GPU)";
  if (has(r, "python ")) return "Python code on the host (the frame above)";
  if (range.empty() && api.empty())
    return "no profiled host activity (Python outside profiled ops, sleep, I/O or another process)";
  return "host work before the next launch";
}

class GpuIdleGaps final : public Detector {
 public:
  explicit GpuIdleGaps(const OptionValues& o)
      : min_gap_ns_(o.integer("min_gap_ns")),
        iteration_share_(o.number("iteration_share")),
        min_relative_gap_ns_(o.integer("min_relative_gap_ns")),
        min_total_share_(o.number("min_total_share")),
        recoverable_fraction_(o.number("recoverable_fraction")),
        top_(std::max<int64_t>(0, o.integer("top"))) {}

  std::string_view id() const override { return "gpu-idle-gaps"; }
  std::string_view title() const override { return "Long GPU idle gaps"; }
  std::vector<std::string> needs() const override { return {"gpu_activity"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* summary = facts.summary(trace_id);
    if (!summary || summary->wall_ns <= 0) return;
    auto windows = iteration_windows(facts, trace_id);
    int64_t median_iter = summary->iterations.median_ns;
    int64_t relative_threshold =
        windows.size() >= 2 && median_iter > 0
            ? std::max(min_relative_gap_ns_, static_cast<int64_t>(iteration_share_ * static_cast<double>(median_iter)))
            : INT64_MAX;
    Interval iter_span = windows.empty() ? Interval{} : Interval{windows.front().start, windows.back().end};

    // GPU busy per device: kernels, copies and memsets all count (a copy engine at work is not idle).
    SQLite::Statement q(
        facts.db(),
        "SELECT coalesce(device_id, 0), start_ns, start_ns + dur_ns FROM _kernel WHERE trace_id = ?1 UNION ALL "
        "SELECT coalesce(device_id, 0), start_ns, start_ns + dur_ns FROM _memcpy WHERE trace_id = ?1 UNION ALL "
        "SELECT coalesce(device_id, 0), start_ns, start_ns + dur_ns FROM _memset WHERE trace_id = ?1");
    q.bind(1, trace_id);
    std::map<int64_t, std::vector<Interval>> busy;
    while (q.executeStep())
      busy[q.getColumn(0).getInt64()].push_back({q.getColumn(1).getInt64(), q.getColumn(2).getInt64()});
    auto dataloader = dataloader_union(facts, trace_id);

    for (auto& [device, list] : busy) {
      auto u = union_intervals(std::move(list));
      // Start-up (context creation, library initialisation, warm-up: steady_state table) is not
      // a gap a fix to the job can close: only the steady state is judged.
      int64_t steady_start = INT64_MIN;
      for (const auto& d : summary->devices)
        if (d.device_id == device && d.startup_ns > 0) steady_start = d.steady_start_ns;
      std::vector<Gap> gaps;
      int64_t all_idle = 0;
      for (size_t i = 1; i < u.size(); ++i) {
        Gap g;
        g.start = std::max(u[i - 1].end, steady_start);
        g.end = u[i].start;
        if (g.end <= g.start) continue;
        all_idle += g.length();
        bool absolute = g.length() >= min_gap_ns_;
        bool relative = g.length() >= relative_threshold && g.start >= iter_span.start && g.end <= iter_span.end;
        if (!absolute && !relative) continue;
        g.dataloader = length_within(dataloader, {g.start, g.end});
        // The step whose work waited: the one the gap ends in. Windows are disjoint and sorted
        // (each starts at or after the previous end), so only the last one starting before
        // g.end can hold it.
        auto after =
            std::partition_point(windows.begin(), windows.end(), [&](const Interval& w) { return w.start < g.end; });
        if (after != windows.begin() && g.end <= std::prev(after)->end)
          g.iteration = static_cast<int64_t>(std::prev(after) - windows.begin());
        gaps.push_back(g);
      }
      // Gaps that are mostly DataLoader waits belong to dataloader-stall.
      std::vector<Gap> kept;
      int64_t dl_gaps = 0, dl_time = 0;
      for (const auto& g : gaps) {
        if (2 * g.dataloader >= g.length()) {
          ++dl_gaps;
          dl_time += g.length();
        } else {
          kept.push_back(g);
        }
      }
      int64_t counted = 0;
      for (const auto& g : kept) counted += g.counted();
      if (kept.empty() || static_cast<double>(counted) < min_total_share_ * static_cast<double>(summary->steady_wall_ns)) {
        sink.below_threshold(checked_below(*this, trace_id, device, "GPU-idle time in unexplained steady-state gaps",
                                           summary->steady_wall_ns > 0
                                               ? static_cast<double>(counted) / static_cast<double>(summary->steady_wall_ns)
                                               : 0.0,
                                           min_total_share_, "share of the steady-state window"));
        continue;
      }
      std::sort(kept.begin(), kept.end(), [](const Gap& a, const Gap& b) {
        return a.length() > b.length() || (a.length() == b.length() && a.start < b.start);
      });
      std::vector<Gap*> described;
      for (Gap& g : kept | ranges::views::take(top_)) described.push_back(&g);
      describe_hosts(facts, trace_id, driving_pids(facts, trace_id, device), described);
      // The idle time counted (the gaps less their DataLoader part), per gap, for the claims.
      std::vector<Interval> pieces;
      for (const auto& g : kept) pieces.push_back({g.start, g.end});
      auto by_gap =
          IdleGapKeys(trace_id, device, u, dataloader).idle_by_gap(subtract_intervals(union_intervals(pieces), dataloader));
      report(trace_id, *summary, device, u, kept, counted, all_idle, dl_gaps, dl_time, relative_threshold, by_gap,
             sink);
    }
  }

 private:
  static std::vector<Interval> iteration_windows(const Facts& facts, int64_t trace_id) {
    SQLite::Statement q(
        facts.db(),
        "SELECT start_ns, end_ns, coalesce(gpu_end_ns, end_ns) FROM iteration WHERE trace_id = ? ORDER BY iteration");
    q.bind(1, trace_id);
    std::vector<Interval> out;
    int64_t prev_end = INT64_MIN;
    while (q.executeStep()) {
      int64_t s = std::max(q.getColumn(0).getInt64(), prev_end);
      int64_t e = std::max({q.getColumn(1).getInt64(), q.getColumn(2).getInt64(), s});
      out.push_back({s, e});
      prev_end = e;
    }
    return out;
  }

  // The processes driving the device (those whose API calls launched its kernels); nullopt when no
  // kernel is linked to its API call (all processes count). Computed once per device.
  static std::optional<std::set<int64_t>> driving_pids(const Facts& facts, int64_t trace_id, int64_t device) {
    {
      SQLite::Statement linked(
          facts.db(), "SELECT EXISTS (SELECT 1 FROM _kernel k WHERE k.trace_id = ? AND k.api_call_id IS NOT NULL)");
      linked.bind(1, trace_id);
      if (!linked.executeStep() || linked.getColumn(0).getInt64() == 0) return std::nullopt;
    }
    SQLite::Statement q(facts.db(),
                        "SELECT DISTINCT b.pid FROM _api_call b JOIN _kernel k ON k.api_call_id = b.id "
                        "WHERE k.trace_id = ? AND coalesce(k.device_id, 0) = ? AND b.pid IS NOT NULL");
    q.bind(1, trace_id);
    q.bind(2, device);
    std::set<int64_t> pids;
    while (q.executeStep()) pids.insert(q.getColumn(0).getInt64());
    return pids;
  }

  // Where a row stands in the order the host activity was first reported in: SQLite read api_call
  // and range through api_by_thread / range_by_thread (trace_id, pid, tid, start_ns, then row id;
  // NULL first) and its ORDER BY ... LIMIT kept the first row read among equal sort keys. The sweep
  // below reads rows in any order and breaks ties on this key, so the same row wins.
  struct ScanKey {
    std::optional<int64_t> pid, tid;
    int64_t start_ns = 0, id = 0;
    auto operator<=>(const ScanKey&) const = default;
  };

  // For every described gap, the API call and the host ranges that cover most of it, on the
  // processes driving the device: one sweep over api_call and one over range for all the gaps
  // (a query per gap scanned both tables once per gap).
  // +trace_id: a plain table scan, cheaper than walking the thread index when the store holds
  // one trace; the order of the rows does not matter here (ScanKey breaks the ties).
  void describe_hosts(const Facts& facts, int64_t trace_id, const std::optional<std::set<int64_t>>& pids,
                      const std::vector<Gap*>& gaps) const {
    if (gaps.empty()) return;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const Gap* g : gaps) {
      lo = std::min(lo, g->start);
      hi = std::max(hi, g->end);
    }
    // Names are read (and a row without one dropped, as the views' join does) only for rows that
    // could win, once per name id.
    std::map<int64_t, std::optional<std::string>> names;
    SQLite::Statement name_q(facts.db(), "SELECT value, value NOT LIKE 'ProfilerStep#%' FROM string WHERE id = ?");
    std::map<int64_t, bool> not_step;
    auto name_of = [&](int64_t name_id) -> const std::optional<std::string>& {
      auto it = names.find(name_id);
      if (it != names.end()) return it->second;
      name_q.reset();
      name_q.bind(1, name_id);
      std::optional<std::string> v;
      bool ns = false;
      if (name_q.executeStep()) {
        v = name_q.getColumn(0).getString();
        ns = name_q.getColumn(1).getInt64() != 0;
      }
      not_step[name_id] = ns;
      return names.emplace(name_id, std::move(v)).first->second;
    };

    // API call: the largest overlap, first in scan order among equal overlaps.
    struct ApiBest {
      bool found = false;
      int64_t ov = 0, name_id = 0;
      ScanKey key;
    };
    std::vector<ApiBest> api_best(gaps.size());
    SQLite::Statement api(facts.db(),
                          "SELECT a.pid, a.tid, a.start_ns, a.id, a.start_ns + a.dur_ns, a.name_id FROM _api_call a "
                          "WHERE +a.trace_id = ?1 AND a.start_ns < ?3 AND a.start_ns + a.dur_ns > ?2");
    api.bind(1, trace_id);
    api.bind(2, lo);
    api.bind(3, hi);
    while (api.executeStep()) {
      std::optional<int64_t> pid = nullable_int(api.getColumn(0));
      if (pid && pids && !pids->count(*pid)) continue;
      int64_t start = api.getColumn(2).getInt64(), end = api.getColumn(4).getInt64();
      for (size_t i = 0; i < gaps.size(); ++i) {
        const Gap& g = *gaps[i];
        if (!(start < g.end && end > g.start)) continue;
        int64_t ov = std::min(end, g.end) - std::max(start, g.start);
        ApiBest& b = api_best[i];
        if (b.found && ov < b.ov) continue;
        ScanKey key{pid, nullable_int(api.getColumn(1)), start, api.getColumn(3).getInt64()};
        if (b.found && ov == b.ov && !(key < b.key)) continue;
        int64_t name_id = api.getColumn(5).getInt64();
        if (!name_of(name_id)) continue;
        b = {true, ov, name_id, key};
      }
    }

    // Ranges covering at least 10% of the gap, iteration markers excluded.
    struct RangeRow {
      int64_t ov;
      std::optional<int64_t> depth;
      ScanKey key;
      int64_t name_id;
    };
    std::vector<std::vector<RangeRow>> ranges(gaps.size());
    SQLite::Statement r(
        facts.db(),
        "SELECT r.pid, r.tid, r.start_ns, r.id, r.start_ns + r.dur_ns, r.depth, r.name_id FROM _range r "
        "WHERE +r.trace_id = ?1 AND r.start_ns < ?3 AND r.start_ns + r.dur_ns > ?2 "
        "AND r.kind IN ('cpu_op', 'user_annotation', 'nvtx')");
    r.bind(1, trace_id);
    r.bind(2, lo);
    r.bind(3, hi);
    while (r.executeStep()) {
      int64_t start = r.getColumn(2).getInt64(), end = r.getColumn(4).getInt64();
      for (size_t i = 0; i < gaps.size(); ++i) {
        const Gap& g = *gaps[i];
        if (!(start < g.end && end > g.start)) continue;
        int64_t ov = std::min(end, g.end) - std::max(start, g.start);
        if (static_cast<double>(ov) < 0.1 * static_cast<double>(g.length())) continue;
        int64_t name_id = r.getColumn(6).getInt64();
        if (!name_of(name_id) || !not_step[name_id]) continue;
        ranges[i].push_back(
            {ov, nullable_int(r.getColumn(5)),
             ScanKey{nullable_int(r.getColumn(0)), nullable_int(r.getColumn(1)), start, r.getColumn(3).getInt64()}, name_id});
      }
    }

    // Python frames (with_stack=True): the deepest frame covering at least half of the gap names
    // the host code when no op, annotation or API call does (decoding, preprocessing, logging).
    struct FrameBest {
      int64_t ov = 0, depth = -1, name_id = 0;
    };
    std::vector<FrameBest> frames(gaps.size());
    SQLite::Statement py(facts.db(),
                         "SELECT r.pid, r.start_ns, r.start_ns + r.dur_ns, r.depth, r.name_id FROM _range r "
                         "WHERE +r.trace_id = ?1 AND r.start_ns < ?3 AND r.start_ns + r.dur_ns > ?2 "
                         "AND r.kind = 'python_function' ORDER BY r.start_ns, r.id");
    py.bind(1, trace_id);
    py.bind(2, lo);
    py.bind(3, hi);
    while (py.executeStep()) {
      std::optional<int64_t> pid = nullable_int(py.getColumn(0));
      if (pid && pids && !pids->count(*pid)) continue;
      int64_t start = py.getColumn(1).getInt64(), end = py.getColumn(2).getInt64();
      int64_t depth = py.getColumn(3).isNull() ? 0 : py.getColumn(3).getInt64();
      for (size_t i = 0; i < gaps.size(); ++i) {
        const Gap& g = *gaps[i];
        if (!(start < g.end && end > g.start)) continue;
        int64_t ov = std::min(end, g.end) - std::max(start, g.start);
        if (2 * ov < g.length() || depth <= frames[i].depth) continue;
        if (!name_of(py.getColumn(4).getInt64())) continue;
        frames[i] = {ov, depth, py.getColumn(4).getInt64()};
      }
    }

    for (size_t i = 0; i < gaps.size(); ++i) {
      Gap& g = *gaps[i];
      const double len = static_cast<double>(g.length());
      std::string api_text, api_name;
      if (api_best[i].found && static_cast<double>(api_best[i].ov) >= 0.1 * len) {
        api_name = *name_of(api_best[i].name_id);
        api_text =
            fmt::format("{} ({} of the gap)", api_name, format_percent(static_cast<double>(api_best[i].ov) / len));
      }
      // The outermost range with the most overlap and the innermost one that still covers half of
      // what that one covers, among the first 200 by (overlap desc, depth).
      auto& rows = ranges[i];
      std::sort(rows.begin(), rows.end(), [](const RangeRow& a, const RangeRow& b) {
        if (a.ov != b.ov) return a.ov > b.ov;
        if (a.depth != b.depth) return a.depth < b.depth;
        return a.key < b.key;
      });
      if (rows.size() > 200) rows.resize(200);
      std::string outer, inner;
      int64_t outer_ov = 0, inner_depth = -1;
      for (const auto& row : rows) {
        int64_t depth = row.depth.value_or(0);
        if (outer.empty()) {
          outer = *name_of(row.name_id);
          outer_ov = row.ov;
          inner_depth = depth;
          continue;
        }
        if (2 * row.ov >= outer_ov && depth > inner_depth) {
          inner = *name_of(row.name_id);
          inner_depth = depth;
        }
      }
      std::string range_text;
      if (!outer.empty())
        range_text = fmt::format("{}{} ({} of the gap)", outer, inner.empty() ? "" : " › " + inner,
                                 format_percent(static_cast<double>(outer_ov) / len));
      if (!range_text.empty() && !api_text.empty())
        g.host = range_text + "; " + api_text;
      else if (!range_text.empty())
        g.host = range_text;
      else if (!api_text.empty())
        g.host = api_text;
      else if (frames[i].depth >= 0)
        g.host = fmt::format("Python {} ({} of the gap)", *name_of(frames[i].name_id),
                             format_percent(static_cast<double>(frames[i].ov) / len));
      else
        g.host = "nothing recorded";
      g.cause = cause_of(api_name, outer + " " + inner);
      if (outer.empty() && api_name.empty())
        g.cause = frames[i].depth >= 0 ? cause_of("", "python " + *name_of(frames[i].name_id)) : cause_of("", "");
    }
  }

  void report(int64_t trace_id, const TraceSummary& summary, int64_t device, const std::vector<Interval>& busy,
              const std::vector<Gap>& kept, int64_t counted, int64_t all_idle, int64_t dl_gaps, int64_t dl_time,
              int64_t relative_threshold, const std::map<std::string, int64_t>& idle_by_gap,
              FindingSink& sink) const {
    const double wall = static_cast<double>(summary.steady_wall_ns);
    int64_t span_start = busy.front().start;
    for (const auto& d : summary.devices)
      if (d.device_id == device && d.startup_ns > 0) span_start = std::max(span_start, d.steady_start_ns);
    int64_t span = busy.back().end - span_start;
    std::string threshold =
        relative_threshold == INT64_MAX
            ? fmt::format("≥ {}", format_ns(min_gap_ns_))
            : fmt::format("≥ {} (or ≥ {} inside the steps: {} of the median step)", format_ns(min_gap_ns_),
                          format_ns(relative_threshold), format_percent(iteration_share_));
    std::string largest;
    for (const auto& [i, g] : kept | ranges::views::take(std::min<int64_t>(top_, 3)) | ranges::views::enumerate)
      largest +=
          fmt::format("{}{}{} — host: {} [{}]", i ? "; " : "", format_ns(g.length()),
                      g.iteration ? fmt::format(" in iteration {}", *g.iteration) : std::string(), g.host, g.cause);
    int64_t first = INT64_MAX, last = -1;
    for (const auto& g : kept)
      if (g.iteration) {
        first = std::min(first, *g.iteration);
        last = std::max(last, *g.iteration);
      }
    Finding f = make_finding(FindingScope::of_trace(trace_id).on_device(device).over_iterations_seen(first, last));
    f.problem = fmt::format(
        "GPU {} ran nothing for {} in {} gaps {} between its first and last work{} ({} of {}; it was busy {} of "
        "its "
        "{} active span). Largest: {}.",
        device, format_ns(counted), kept.size(), threshold, summary.startup_ns > 0 ? " after start-up" : "",
        format_percent(static_cast<double>(counted) / wall), summary.startup_ns > 0 ? "the steady state" : "wall time",
        format_percent(1.0 - static_cast<double>(all_idle) / static_cast<double>(std::max<int64_t>(1, span))),
        format_ns(span), largest);
    if (dl_gaps > 0)
      f.problem += fmt::format(" Not counted: {} gaps ({}) spent in DataLoader fetches, reported by dataloader-stall.",
                               dl_gaps, format_ns(dl_time));
    std::set<std::string> causes;
    for (const Gap& g : kept | ranges::views::take(top_)) causes.insert(g.cause);
    std::string rec =
        "Keep the GPU fed across these gaps. Find the host code that runs in them (the evidence names the "
        "op/annotation "
        "and API call; torch.profiler with with_stack=True, or nsys with CPU sampling, shows the Python lines). Then: "
        "move per-step host work off the critical path (a background thread or process for logging, metrics and "
        "checkpoints: torch.distributed.checkpoint.async_save or saving from a copy every N steps), remove "
        "synchronizations that stop the host from running ahead, avoid allocator churn (no torch.cuda.empty_cache() in "
        "the loop; set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True), and exclude warm-up from the profile "
        "(torch.profiler.schedule(wait=1, warmup=2, active=3)).";
    f.recommendation = rec;
    f.estimated_savings_ns = static_cast<int64_t>(recoverable_fraction_ * static_cast<double>(counted));
    // The gaps' idle time, claimed gap by gap: a finding naming the cause of a gap (host-sync,
    // allocation-churn, launch-bound ...) keeps that part, this one what nothing else explains.
    f.generic = true;
    add_idle_claims(f.claims, idle_by_gap, f.estimated_savings_ns);
    f.savings_method = fmt::format(
        "idle time of the gaps above the threshold (DataLoader waits excluded) x {:.2f} (recoverable_fraction: the "
        "part "
        "assumed avoidable by overlapping or removing the host work that spans them)",
        recoverable_fraction_);
    f.confidence = 0.4;
    f.evidence["device_id"] = device;
    f.evidence["gaps"] = static_cast<int64_t>(kept.size());
    f.evidence["idle_in_gaps_ns"] = counted;
    f.evidence["all_idle_ns"] = all_idle;
    f.evidence["active_span_ns"] = span;
    f.evidence["min_gap_ns"] = min_gap_ns_;
    if (relative_threshold != INT64_MAX) f.evidence["relative_gap_ns"] = relative_threshold;
    nlohmann::ordered_json top = nlohmann::ordered_json::array();
    for (const Gap& g : kept | ranges::views::take(top_)) {
      nlohmann::ordered_json j;
      j["start_ns"] = g.start;
      j["dur_ns"] = g.length();
      if (g.iteration) j["iteration"] = *g.iteration;
      j["host"] = g.host;
      j["cause"] = g.cause;
      top.push_back(j);
    }
    f.evidence["largest_gaps"] = top;
    if (dl_gaps > 0)
      f.evidence["dataloader_gaps"] =
          fmt::format("{} gaps, {} (reported by dataloader-stall)", dl_gaps, format_ns(dl_time));
    sink.report(std::move(f));
  }

  int64_t min_gap_ns_;
  double iteration_share_;
  int64_t min_relative_gap_ns_;
  double min_total_share_;
  double recoverable_fraction_;
  int64_t top_;
};

}  // namespace

DetectorInfo gpu_idle_gaps_info() {
  return {
      "gpu-idle-gaps",
      {{"min_gap_ns", 500000000, "a gap at least this long always counts (nsys gpu_gaps default: 500 ms)"},
       {"iteration_share", 0.25, "inside the iterations, a gap of at least this share of the median iteration counts"},
       {"min_relative_gap_ns", 10000000, "floor of that step-relative threshold (ns)"},
       {"min_total_share", 0.01, "report when the counted gaps add up to at least this share of wall time"},
       {"recoverable_fraction", 0.5, "share of the gap time assumed recoverable"},
       {"top", 5, "how many of the largest gaps to describe"}},
      [](const OptionValues& o) { return std::make_unique<GpuIdleGaps>(o); }};
}

}  // namespace proflint
