// detectors/host_sync.cpp — host-sync
// Flags host synchronizations inside the training loop (cudaDeviceSynchronize, stream/event syncs,
// scalar read-backs) that block the CPU and leave the GPU without queued work afterwards.
// Docs: docs/detectors/host-sync.md
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/analysis/dataloader_ranges.hpp"
#include "engine/analysis/detector.hpp"
#include "engine/analysis/idle_claims.hpp"
#include "engine/analysis/source_sites.hpp"
#include "engine/common/format.hpp"
#include "engine/common/intervals.hpp"

namespace proflint {

namespace {

constexpr std::array<std::string_view, 10> kSyncApis = {
    "cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
    "cuCtxSynchronize",      "cuStreamSynchronize",   "cuEventSynchronize",    "hipDeviceSynchronize",
    "hipStreamSynchronize",  "hipEventSynchronize"};

// Framework ops whose result must be read on the host: .item(), `if tensor:`, nonzero/boolean masks.
const std::set<std::string, std::less<>> kReadbackOps = {"item",
                                                         "_local_scalar_dense",
                                                         "is_nonzero",
                                                         "nonzero",
                                                         "equal",
                                                         "masked_select",
                                                         "_unique2",
                                                         "unique_consecutive",
                                                         "unique_dim",
                                                         "allclose",
                                                         "repeat_interleave"};
// Blocking copies (.to()/.cpu()/.copy_() without non_blocking): sync-memcpy reports those.
const std::set<std::string, std::less<>> kCopyOps = {"copy_", "to", "_to_copy", "cpu", "numpy"};

enum class SyncClass { explicit_sync, readback, library, copy };

std::string_view class_name(SyncClass c) {
  switch (c) {
    case SyncClass::explicit_sync:
      return "explicit";
    case SyncClass::readback:
      return "readback";
    case SyncClass::library:
      return "library";
    case SyncClass::copy:
      return "copy";
  }
  return "explicit";
}

struct GpuOp {
  int64_t start, end, launch;  // launch: start of the launching API call, -1 when unknown
};

struct Sync {
  int64_t id, start, dur, pid, tid;
  std::optional<int64_t> iteration;
  std::string api;
  SyncClass cls = SyncClass::explicit_sync;
  std::string site;        // where it was called: innermost op chain, or "outside any op"
  int64_t blocked = 0;     // host time blocked: the call, plus the memcpy it completes
  int64_t idle_after = 0;  // GPU idle that followed, capped at `blocked`
  int64_t idle_device = -1;             // the device that idled after it
  std::vector<Interval> idle_pieces;    // where (DataLoader waits not yet removed)
  int64_t end() const { return start + dur; }
};

class HostSync final : public Detector {
 public:
  explicit HostSync(const OptionValues& o)
      : min_idle_share_(o.number("min_idle_share")),
        min_block_share_(o.number("min_block_share")),
        min_iteration_fraction_(o.number("min_iteration_fraction")),
        min_count_(o.integer("min_count")),
        copy_gap_ns_(o.integer("copy_gap_ns")),
        tolerated_readbacks_(o.integer("tolerated_readbacks_per_step")) {}

  std::string_view id() const override { return "host-sync"; }
  std::string_view title() const override { return "Host synchronizations stall the GPU queue"; }
  std::vector<std::string> needs() const override { return {"api_calls", "gpu_activity"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* summary = facts.summary(trace_id);
    if (!summary || summary->wall_ns <= 0) return;
    auto syncs = load_syncs(facts, trace_id);
    if (syncs.empty()) return;
    classify(facts, trace_id, syncs);
    measure_idle(facts, trace_id, syncs);

    const int64_t n_iter = summary->iterations.count;
    // Per class: which iterations hold such syncs (library syncs confined to a warm-up are dropped).
    std::map<SyncClass, std::set<int64_t>> iters_with;
    std::map<SyncClass, int64_t> count;
    for (const auto& s : syncs) {
      ++count[s.cls];
      if (s.iteration) iters_with[s.cls].insert(*s.iteration);
    }
    auto recurring = [&](SyncClass c) {
      if (n_iter > 0)
        return static_cast<double>(iters_with[c].size()) >= min_iteration_fraction_ * static_cast<double>(n_iter);
      return count[c] >= min_count_;
    };
    const bool library_recurring = recurring(SyncClass::library);

    // Avoidable syncs: everything but blocking copies (sync-memcpy) and library syncs of a warm-up.
    // "Excess" syncs per iteration: explicit + library + read-backs beyond the tolerated ones. With
    // iterations, only syncs inside them count towards the per-step pattern and its blocking time.
    std::map<int64_t, int64_t> excess_per_iter;
    std::map<int64_t, int64_t> readbacks_seen;  // iteration -> read-backs so far
    int64_t idle_total = 0, blocked_excess = 0, excess_outside = 0;
    std::vector<const Sync*> avoidable;
    for (const auto& s : syncs) {  // in time order
      if (s.cls == SyncClass::copy) continue;
      if (s.cls == SyncClass::library && !library_recurring) continue;
      avoidable.push_back(&s);
      idle_total += s.idle_after;
      bool excess = true;
      if (s.cls == SyncClass::readback) {
        // The first read-backs of a step are tolerated (loss.item() for logging, GradScaler's inf check);
        // outside steps there is no "per step" to judge.
        excess = s.iteration && ++readbacks_seen[*s.iteration] > tolerated_readbacks_;
      }
      if (!excess) continue;
      if (s.iteration) {
        ++excess_per_iter[*s.iteration];
        blocked_excess += s.blocked;
      } else {
        ++excess_outside;
        if (n_iter == 0) blocked_excess += s.blocked;
      }
    }
    int64_t iters_with_excess = 0, max_excess = 0;
    for (const auto& [k, n] : excess_per_iter) {
      if (n > 0) ++iters_with_excess;
      max_excess = std::max(max_excess, n);
    }
    bool per_step;
    if (n_iter >= 2) {
      per_step = static_cast<double>(iters_with_excess) >= min_iteration_fraction_ * static_cast<double>(n_iter);
    } else if (n_iter == 1) {
      per_step = max_excess >= 2;  // one step: a single sync (e.g. before stopping a timer) is not a pattern
    } else {
      per_step = excess_outside >= min_count_;
    }
    const double wall = static_cast<double>(summary->wall_ns);
    bool fires_idle = static_cast<double>(idle_total) >= min_idle_share_ * wall && idle_total > 0;
    bool fires_block = per_step && static_cast<double>(blocked_excess) >= min_block_share_ * wall;
    if (!fires_idle && !fires_block) {
      sink.below_threshold(checked_below(*this, trace_id, std::nullopt, "GPU-idle time after avoidable host syncs",
                                         static_cast<double>(idle_total) / wall, min_idle_share_, "share of wall time"));
      return;
    }

    report(facts, trace_id, *summary, syncs, avoidable, library_recurring, idle_total, blocked_excess, iters_with_excess,
           sink);
  }

 private:
  static std::vector<Sync> load_syncs(const Facts& facts, int64_t trace_id) {
    std::string in;
    for (auto n : kSyncApis) in += fmt::format("{}'{}'", in.empty() ? "" : ", ", n);
    SQLite::Statement q(
        facts.db(),
        "SELECT id, name, start_ns, dur_ns, coalesce(pid, -1), coalesce(tid, -1), iteration FROM api_call "
        "WHERE trace_id = ? AND name IN (" +
            in + ") ORDER BY start_ns, id");
    q.bind(1, trace_id);
    std::vector<Sync> out;
    while (q.executeStep()) {
      Sync s;
      s.id = q.getColumn(0).getInt64();
      s.api = q.getColumn(1).getString();
      s.start = q.getColumn(2).getInt64();
      s.dur = q.getColumn(3).getInt64();
      s.pid = q.getColumn(4).getInt64();
      s.tid = q.getColumn(5).getInt64();
      if (!q.getColumn(6).isNull()) s.iteration = q.getColumn(6).getInt64();
      out.push_back(std::move(s));
    }
    return out;
  }

  // Class and call site from the enclosing op chain; blocking span from the memcpy a sync completes.
  void classify(const Facts& facts, int64_t trace_id, std::vector<Sync>& syncs) const {
    SQLite::Statement op_of(facts.db(), "SELECT op_id FROM api_call WHERE id = ?");
    SQLite::Statement op_row(facts.db(), "SELECT name, op_type, parent_id FROM op WHERE id = ?");
    SQLite::Statement prev(facts.db(),
                           "SELECT name, start_ns + dur_ns, dur_ns FROM api_call WHERE trace_id = ? AND pid = ? AND "
                           "tid = ? AND start_ns < ? "
                           "ORDER BY start_ns DESC LIMIT 1");
    struct OpInfo {
      std::string name, type;
      std::optional<int64_t> parent;
    };
    std::map<int64_t, OpInfo> cache;
    auto op_info = [&](int64_t id) -> const OpInfo& {
      auto it = cache.find(id);
      if (it != cache.end()) return it->second;
      OpInfo info;
      op_row.reset();
      op_row.bind(1, id);
      if (op_row.executeStep()) {
        info.name = op_row.getColumn(0).getString();
        info.type = op_row.getColumn(1).isNull() ? "" : op_row.getColumn(1).getString();
        if (!op_row.getColumn(2).isNull()) info.parent = op_row.getColumn(2).getInt64();
      }
      return cache.emplace(id, std::move(info)).first->second;
    };
    for (auto& s : syncs) {
      op_of.reset();
      op_of.bind(1, s.id);
      std::optional<int64_t> op;
      if (op_of.executeStep() && !op_of.getColumn(0).isNull()) op = op_of.getColumn(0).getInt64();
      std::vector<const OpInfo*> chain;  // innermost first
      for (auto o = op; o && chain.size() < 64;) {
        const OpInfo& info = op_info(*o);
        if (info.name.empty()) break;
        chain.push_back(&info);
        o = info.parent;
      }
      bool unassociated = chain.empty() || chain.front()->type == "unassociated";
      bool readback = false, copy = false;
      for (const OpInfo* i : chain) {
        readback = readback || kReadbackOps.contains(i->type);
        copy = copy || kCopyOps.contains(i->type);
      }
      // The memcpy this sync completes (cudaMemcpyAsync immediately followed by a stream sync).
      int64_t memcpy_dur = 0;
      if (s.pid >= 0 && s.tid >= 0) {
        prev.reset();
        prev.bind(1, trace_id);
        prev.bind(2, s.pid);
        prev.bind(3, s.tid);
        prev.bind(4, s.start);
        if (prev.executeStep()) {
          std::string name = prev.getColumn(0).getString();
          int64_t end = prev.getColumn(1).getInt64();
          if (name.find("emcpy") != std::string::npos && s.start - end <= copy_gap_ns_)
            memcpy_dur = prev.getColumn(2).getInt64();
        }
      }
      if (readback)
        s.cls = SyncClass::readback;
      else if (copy || (unassociated && memcpy_dur > 0))
        s.cls = SyncClass::copy;
      else if (unassociated)
        s.cls = SyncClass::explicit_sync;
      else
        s.cls = SyncClass::library;
      s.blocked = s.dur + (s.cls == SyncClass::readback || s.cls == SyncClass::copy ? memcpy_dur : 0);
      if (unassociated) {
        s.site = "outside any op";
      } else {
        // Outermost and innermost op name: "aten::item › aten::_local_scalar_dense".
        s.site = chain.back()->name;
        if (chain.size() > 1) s.site += " › " + chain.front()->name;
      }
    }
  }

  // GPU idle after each sync: from the sync's return, the gaps before each following GPU op that
  // was launched only after the GPU had run dry (the host was behind), until an op was already
  // queued (the host got ahead again), the thread's next sync, or the end of the GPU work. DataLoader
  // waits are left out (dataloader-stall reports them). Capped at the time the sync blocked: without
  // it, the host could have been at most that much further ahead.
  void measure_idle(const Facts& facts, int64_t trace_id, std::vector<Sync>& syncs) const {
    SQLite::Statement q(
        facts.db(),
        "SELECT g.device_id, g.start_ns, g.end_ns, coalesce(a.start_ns, -1), coalesce(a.pid, -1) FROM ("
        " SELECT device_id, start_ns, start_ns + dur_ns AS end_ns, api_call_id FROM _kernel WHERE trace_id = ?1 UNION "
        "ALL"
        " SELECT device_id, start_ns, start_ns + dur_ns, api_call_id FROM _memcpy WHERE trace_id = ?1 UNION ALL"
        " SELECT device_id, start_ns, start_ns + dur_ns, api_call_id FROM _memset WHERE trace_id = ?1) g "
        "LEFT JOIN _api_call a ON a.id = g.api_call_id ORDER BY g.device_id, g.start_ns");
    q.bind(1, trace_id);
    std::map<int64_t, std::vector<GpuOp>> gpu;
    std::map<int64_t, std::set<int64_t>> devices_of_pid;
    while (q.executeStep()) {
      int64_t d = q.getColumn(0).isNull() ? 0 : q.getColumn(0).getInt64();
      gpu[d].push_back({q.getColumn(1).getInt64(), q.getColumn(2).getInt64(), q.getColumn(3).getInt64()});
      if (q.getColumn(4).getInt64() >= 0) devices_of_pid[q.getColumn(4).getInt64()].insert(d);
    }
    std::map<int64_t, std::vector<int64_t>> prefix_max_end;
    for (auto& [d, ops] : gpu) {
      auto& pm = prefix_max_end[d];
      pm.reserve(ops.size());
      int64_t m = INT64_MIN;
      for (const auto& o : ops) pm.push_back(m = std::max(m, o.end));
    }
    auto dataloader = dataloader_union(facts, trace_id);
    std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> next_sync;  // thread -> sorted sync starts
    for (const auto& s : syncs) next_sync[{s.pid, s.tid}].push_back(s.start);

    for (auto& s : syncs) {
      const auto& starts = next_sync[{s.pid, s.tid}];
      auto nx = std::upper_bound(starts.begin(), starts.end(), s.start);
      int64_t limit = nx == starts.end() ? INT64_MAX : *nx;
      std::vector<int64_t> devices;
      auto pd = devices_of_pid.find(s.pid);
      if (pd != devices_of_pid.end())
        devices.assign(pd->second.begin(), pd->second.end());
      else
        for (const auto& [d, ops] : gpu) devices.push_back(d);
      int64_t best = 0;
      s.idle_pieces.clear();
      for (int64_t d : devices) {
        std::vector<Interval> pieces;
        const auto& ops = gpu[d];
        const auto& pm = prefix_max_end[d];
        const int64_t t = s.end();
        size_t i = static_cast<size_t>(
            std::lower_bound(ops.begin(), ops.end(), t, [](const GpuOp& o, int64_t v) { return o.start < v; }) -
            ops.begin());
        if (i > 0 && pm[i - 1] > t) continue;  // the GPU still had work: the queue did not drain
        int64_t prev_end = t, idle = 0;
        for (; i < ops.size(); ++i) {
          const GpuOp& o = ops[i];
          if (o.start >= limit) {
            idle += gap(dataloader, prev_end, limit);
            pieces.push_back({prev_end, limit});
            break;
          }
          if (o.launch < 0 || o.launch < prev_end) break;  // already queued: the host was ahead again
          idle += gap(dataloader, prev_end, o.start);
          pieces.push_back({prev_end, o.start});
          prev_end = std::max(prev_end, o.end);
        }
        if (idle > best) {
          best = idle;
          s.idle_device = d;
          s.idle_pieces = std::move(pieces);
        }
      }
      s.idle_after = std::min(best, s.blocked);
    }
  }

  static int64_t gap(const std::vector<Interval>& excluded, int64_t from, int64_t to) {
    if (to <= from) return 0;
    return (to - from) - length_within(excluded, {from, to});
  }

  void report(const Facts& facts, int64_t trace_id, const TraceSummary& summary, const std::vector<Sync>& syncs,
              const std::vector<const Sync*>& avoidable, bool library_recurring, int64_t idle_total,
              int64_t blocked_excess, int64_t iters_with_excess, FindingSink& sink) const {
    const double wall = static_cast<double>(summary.wall_ns);
    const int64_t n_iter = summary.iterations.count;
    struct Group {
      int64_t count = 0, blocked = 0, idle = 0, example = -1;
      std::set<int64_t> iterations;
      std::map<std::string, int64_t> sites;  // "api @ site" -> count
    };
    std::map<SyncClass, Group> groups;
    for (const Sync* s : avoidable) {
      Group& g = groups[s->cls];
      ++g.count;
      g.blocked += s->blocked;
      g.idle += s->idle_after;
      if (g.example < 0) g.example = s->id;
      if (s->iteration) g.iterations.insert(*s->iteration);
      ++g.sites[s->api + (s->site == "outside any op" ? " " : " in ") + s->site];
    }
    int64_t copies = 0, warmup_library = 0;
    for (const auto& s : syncs) {
      if (s.cls == SyncClass::copy) ++copies;
      if (s.cls == SyncClass::library && !library_recurring) ++warmup_library;
    }

    auto per_iter = [&](int64_t n) {
      return n_iter > 0 ? fmt::format(" ({:.1f} per step)", static_cast<double>(n) / static_cast<double>(n_iter))
                        : std::string();
    };
    auto top_sites = [](const Group& g, size_t k) {
      std::vector<std::pair<std::string, int64_t>> v(g.sites.begin(), g.sites.end());
      std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
        return a.second > b.second || (a.second == b.second && a.first < b.first);
      });
      std::string out;
      for (size_t i = 0; i < v.size() && i < k; ++i)
        out += fmt::format("{}{} ×{}", i ? "; " : "", v[i].first, v[i].second);
      return out;
    };
    static const std::map<SyncClass, std::string> what = {
        {SyncClass::explicit_sync,
         "explicit syncs outside any op (torch.cuda.synchronize(), stream/event .synchronize())"},
        {SyncClass::readback, "scalar read-backs (.item(), `if tensor:`, nonzero/boolean masks)"},
        {SyncClass::library, "syncs inside library ops"}};

    std::string parts;
    for (SyncClass c : {SyncClass::explicit_sync, SyncClass::library, SyncClass::readback}) {
      auto it = groups.find(c);
      if (it == groups.end()) continue;
      const Group& g = it->second;
      parts +=
          fmt::format("{}{}: {}{}, host blocked {}, GPU idle after them {} ({})", parts.empty() ? "" : "; ", what.at(c),
                      g.count, per_iter(g.count), format_ns(g.blocked), format_ns(g.idle), top_sites(g, 2));
    }
    int64_t first = INT64_MAX, last = -1;
    for (const Sync* s : avoidable)
      if (s->iteration) {
        first = std::min(first, *s->iteration);
        last = std::max(last, *s->iteration);
      }
    Finding f = make_finding(FindingScope::of_trace(trace_id).over_iterations_seen(first, last));
    std::string steps =
        n_iter > 0 ? fmt::format(" (excess syncs in {} of {} steps)", iters_with_excess, n_iter) : std::string();
    f.problem = fmt::format(
        "{} avoidable host synchronizations{}: {}. The excess ones blocked the host {} ({} of wall time); after the "
        "syncs "
        "the GPU sat idle {} ({}) until the host had queued new work.",
        avoidable.size(), steps, parts, format_ns(blocked_excess),
        format_percent(static_cast<double>(blocked_excess) / wall), format_ns(idle_total),
        format_percent(static_cast<double>(idle_total) / wall));
    auto rb = groups.find(SyncClass::readback);
    if (rb != groups.end() && n_iter > 0)
      f.problem += fmt::format(
          " Up to {} scalar read-backs per step (loss.item() for logging, GradScaler's inf check under fp16) are "
          "tolerated "
          "and not counted as excess.",
          tolerated_readbacks_);

    // Plain CUDA code gets the CUDA advice first; inference loops are not "training steps".
    const std::string workload = summary.workload.value_or("");
    const char* step = workload == "training" ? "training step" : workload == "inference" ? "inference loop" : "step";
    const std::string cuda_rec =
        "CUDA: drop cudaDeviceSynchronize/cudaStreamSynchronize between kernels on one stream (stream order already "
        "serialises them), order work across streams with cudaStreamWaitEvent, and read results back only where "
        "the host needs them (cudaMemcpyAsync into pinned memory, one wait per batch of work).";
    const std::string framework_rec = fmt::format(
        "Remove torch.cuda.synchronize() and stream/event .synchronize() calls from the {} (keep them only "
        "around timing code, outside the profiled loop). Avoid .item(), .cpu(), .numpy(), .tolist() and print(tensor) "
        "inside the step: accumulate metrics on the GPU (running_loss += loss.detach()) and read them every N steps; "
        "avoid data-dependent shapes (boolean masks, nonzero) or use torch.where; copy with .to(device, "
        "non_blocking=True) "
        "from pinned memory. Find the remaining ones with torch.cuda.set_sync_debug_mode(\"warn\"). TensorFlow: avoid "
        ".numpy()/float(tensor) in the step and log from tf.summary inside tf.function.",
        step);
    std::string rec = workload == "non_framework" ? cuda_rec : framework_rec + " " + cuda_rec;
    if (groups.count(SyncClass::library))
      rec +=
          " Syncs inside library ops (e.g. result-size read-backs) come from the library: batch such calls, or use "
          "variants with known output sizes.";
    f.recommendation = rec;
    f.estimated_savings_ns = idle_total;
    // The idle gaps after the syncs, per gap (engine/analysis/idle_claims.hpp): gpu-idle-gaps and
    // gpu-underutilized count the same idle time and give way to this finding on it.
    {
      std::map<int64_t, std::vector<Interval>> pieces;  // device -> idle after avoidable syncs
      for (const Sync* s : avoidable)
        if (s->idle_after > 0) pieces[s->idle_device].insert(pieces[s->idle_device].end(), s->idle_pieces.begin(), s->idle_pieces.end());
      std::map<std::string, int64_t> by_gap;
      const auto dataloader = dataloader_union(facts, trace_id);
      for (auto& [d, list] : pieces)
        for (const auto& [key, ns] :
             IdleGapKeys(facts, trace_id, d).idle_by_gap(subtract_intervals(union_intervals(std::move(list)), dataloader)))
          by_gap[key] += ns;
      add_idle_claims(f.claims, by_gap, f.estimated_savings_ns);
    }
    f.savings_method =
        "sum over the avoidable syncs of the GPU idle time that followed each one until the host had queued work again "
        "(DataLoader waits excluded), each capped at the time that sync blocked the host";
    f.confidence = 0.6;

    f.evidence["syncs"] = static_cast<int64_t>(avoidable.size());
    f.evidence["host_blocked_ns"] = blocked_excess;
    f.evidence["gpu_idle_after_ns"] = idle_total;
    if (n_iter > 0) f.evidence["steps_with_excess_syncs"] = iters_with_excess;
    for (const auto& [c, g] : groups) {
      nlohmann::ordered_json j;
      j["count"] = g.count;
      j["host_blocked_ns"] = g.blocked;
      j["gpu_idle_after_ns"] = g.idle;
      j["sites"] = top_sites(g, 4);
      j["example_api_call_id"] = g.example;
      f.evidence[std::string(class_name(c))] = j;
    }
    {
      // Where the syncs are called from, when the profile records Python frames (with_stack).
      SourceSites sites(facts, trace_id, "host blocked");
      for (const Sync* s : avoidable) sites.add_api_call(s->id, s->blocked);
      attach_locations(f, sites.top(5));
    }
    if (copies > 0) f.evidence["blocking_copy_syncs"] = fmt::format("{} (reported by sync-memcpy)", copies);
    if (warmup_library > 0)
      f.evidence["warmup_library_syncs"] =
          fmt::format("{} in too few steps to be a per-step cost (e.g. cuDNN autotuning), ignored", warmup_library);
    sink.report(std::move(f));
  }

  double min_idle_share_;
  double min_block_share_;
  double min_iteration_fraction_;
  int64_t min_count_;
  int64_t copy_gap_ns_;
  int64_t tolerated_readbacks_;
};

}  // namespace

DetectorInfo host_sync_info() {
  return {"host-sync",
          {{"min_idle_share", 0.02, "report when the GPU idles at least this share of wall time after avoidable syncs"},
           {"min_block_share", 0.01,
            "or when avoidable syncs recur every step and block the host at least this share of wall time"},
           {"min_iteration_fraction", 0.5, "a sync kind recurs when it appears in at least this fraction of the steps"},
           {"min_count", 3, "without iterations: a sync kind recurs when it appears at least this many times"},
           {"tolerated_readbacks_per_step", 2,
            "scalar read-backs per step not counted as excess (loss.item() for logging, fp16 GradScaler's inf check)"},
           {"copy_gap_ns", 20000,
            "a sync starting at most this long after a memcpy call on the same thread completes that copy"}},
          [](const OptionValues& o) { return std::make_unique<HostSync>(o); }};
}

}  // namespace proflint
