// detectors/sync_memcpy.cpp — sync-memcpy
// Flags memory copies that are synchronous for the host (cudaMemcpy without Async, device-to-
// pageable copies, async copies waited on at once) while no kernel runs on the GPU: the copy is
// serialised with both the host and the compute it could overlap. Docs: docs/detectors/sync-memcpy.md
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

enum class Why { sync_api, pageable_dtoh, pageable_htod, waited };

struct Copy {
  int64_t memcpy_id, device, bytes, api_id, api_start, api_end, pid, tid;
  int64_t copy_start, copy_end;  // the copy on the GPU
  std::string kind, api, op;
  std::optional<int64_t> iteration;
  Why why = Why::sync_api;
  int64_t block_end = 0;  // end of the host wait: the call, or the sync that waited for it
  std::string waited_by;  // the sync call that completed an async copy
  int64_t exposed = 0;    // host-blocked time with no kernel running on the device
};

class SyncMemcpy final : public Detector {
 public:
  explicit SyncMemcpy(const OptionValues& o)
      : min_share_(o.number("min_share")),
        min_exposed_ns_(o.integer("min_exposed_ns")),
        small_htod_bytes_(o.integer("small_htod_bytes")),
        wait_gap_ns_(o.integer("wait_gap_ns")),
        overlap_fraction_(o.number("overlap_fraction")) {}

  std::string_view id() const override { return "sync-memcpy"; }
  std::string_view title() const override { return "Synchronous memory copies block the host while the GPU computes nothing"; }
  std::vector<std::string> needs() const override { return {"memcpy", "api_calls"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* summary = facts.summary(trace_id);
    if (!summary || summary->wall_ns <= 0) return;
    auto copies = load_candidates(facts, trace_id);
    if (copies.empty()) return;

    // Kernel busy time per device: the copy is "exposed" where no kernel ran beside it.
    std::map<int64_t, std::vector<Interval>> kernels;
    {
      SQLite::Statement q(facts.db(), "SELECT coalesce(device_id, 0), start_ns, start_ns + dur_ns FROM _kernel WHERE trace_id = ?");
      q.bind(1, trace_id);
      while (q.executeStep()) kernels[q.getColumn(0).getInt64()].push_back({q.getColumn(1).getInt64(), q.getColumn(2).getInt64()});
      for (auto& [d, v] : kernels) v = union_intervals(std::move(v));
    }
    std::map<int64_t, std::vector<Copy*>> by_device;
    for (auto& c : copies) {
      // The copy's own transfer while the host waits for it; waiting for earlier queued work is
      // host-sync's business.
      Interval blocked{std::max(c.api_start, c.copy_start), std::min(c.block_end, c.copy_end)};
      auto it = kernels.find(c.device);
      c.exposed = blocked.length() - (it == kernels.end() ? 0 : length_within(it->second, blocked));
      by_device[c.device].push_back(&c);
    }
    const double wall = static_cast<double>(summary->wall_ns);
    for (const auto& [device, list] : by_device) {
      int64_t exposed = 0, blocked = 0;
      for (const Copy* c : list) {
        exposed += c->exposed;
        blocked += c->block_end - c->api_start;
      }
      if (exposed < min_exposed_ns_) {
        sink.below_threshold(checked_below(*this, trace_id, device, "host-blocked copy time with no kernel running",
                                           static_cast<double>(exposed), static_cast<double>(min_exposed_ns_), "ns"));
        continue;
      }
      if (static_cast<double>(exposed) < min_share_ * wall) {
        sink.below_threshold(checked_below(*this, trace_id, device, "host-blocked copy time with no kernel running",
                                           static_cast<double>(exposed) / wall, min_share_, "share of wall time"));
        continue;
      }
      int64_t kernel_busy = kernels.count(device) ? total_length(kernels.at(device)) : 0;
      report(facts, trace_id, *summary, device, list, exposed, blocked, kernel_busy, sink);
    }
  }

 private:
  std::vector<Copy> load_candidates(const Facts& facts, int64_t trace_id) const {
    SQLite::Statement q(facts.db(),
        "SELECT m.id, coalesce(m.device_id, 0), m.kind, coalesce(m.dst_kind, ''), coalesce(m.bytes, 0), a.id, a.name, "
        "a.start_ns, a.end_ns, coalesce(a.pid, -1), coalesce(a.tid, -1), a.iteration, coalesce(os.value, ''), "
        "m.start_ns, m.end_ns, coalesce(m.src_kind, '') "
        "FROM memcpy m JOIN api_call a ON a.id = m.api_call_id LEFT JOIN _op o ON o.id = a.op_id "
        "LEFT JOIN string os ON os.id = o.name_id "
        "WHERE m.trace_id = ? ORDER BY a.start_ns, m.id");
    q.bind(1, trace_id);
    SQLite::Statement next(facts.db(),
        "SELECT name, start_ns, end_ns FROM api_call WHERE trace_id = ? AND pid = ? AND tid = ? AND start_ns >= ? AND id != ? "
        "ORDER BY start_ns LIMIT 1");
    std::vector<Copy> out;
    while (q.executeStep()) {
      Copy c;
      c.memcpy_id = q.getColumn(0).getInt64();
      c.device = q.getColumn(1).getInt64();
      c.kind = q.getColumn(2).getString();
      std::string dst_kind = q.getColumn(3).getString();
      std::string src_kind = q.getColumn(15).getString();
      c.bytes = q.getColumn(4).getInt64();
      c.api_id = q.getColumn(5).getInt64();
      c.api = q.getColumn(6).getString();
      c.api_start = q.getColumn(7).getInt64();
      c.api_end = q.getColumn(8).getInt64();
      c.pid = q.getColumn(9).getInt64();
      c.tid = q.getColumn(10).getInt64();
      if (!q.getColumn(11).isNull()) c.iteration = q.getColumn(11).getInt64();
      c.op = q.getColumn(12).getString();
      c.copy_start = q.getColumn(13).getInt64();
      c.copy_end = q.getColumn(14).getInt64();
      c.block_end = c.api_end;
      // Copies inside one device return at once for the host (nsys cuda_memcpy_sync excludes them).
      if (c.kind == "dtod") continue;
      std::string api = lower(c.api);
      // Only copies launched by a copy API (a mis-correlated row must not count as a cudaMemcpy).
      if (api.find("memcpy") == std::string::npos) continue;
      bool async = api.find("async") != std::string::npos;
      if (!async) {
        // Small pageable host-to-device copies are staged and return immediately (nsys: <= 64 KB).
        if (c.kind == "htod" && c.bytes <= small_htod_bytes_) continue;
        c.why = Why::sync_api;
      } else if (c.kind == "dtoh" && dst_kind == "pageable") {
        c.why = Why::pageable_dtoh;
      } else if (!waited_for(facts, trace_id, next, c)) {
        // Large pageable host-to-device copies return only once the data is staged: synchronous too.
        if (c.kind != "htod" || src_kind != "pageable" || c.bytes <= small_htod_bytes_) continue;
        c.why = Why::pageable_htod;
      }
      out.push_back(std::move(c));
    }
    return out;
  }

  // An async copy the thread waits for at once (.to() without non_blocking=True): the next API call
  // on its thread is a stream/device sync that starts within wait_gap_ns.
  bool waited_for(const Facts&, int64_t trace_id, SQLite::Statement& next, Copy& c) const {
    if (c.pid < 0 || c.tid < 0) return false;
    next.reset();
    next.bind(1, trace_id);
    next.bind(2, c.pid);
    next.bind(3, c.tid);
    next.bind(4, c.api_end);
    next.bind(5, c.api_id);
    if (!next.executeStep()) return false;
    std::string name = next.getColumn(0).getString();
    if (name.find("Synchronize") == std::string::npos || name.find("Event") != std::string::npos) return false;
    if (next.getColumn(1).getInt64() - c.api_end > wait_gap_ns_) return false;
    c.why = Why::waited;
    c.waited_by = name;
    c.block_end = next.getColumn(2).getInt64();
    return true;
  }

  void report(const Facts& facts, int64_t trace_id, const TraceSummary& summary, int64_t device, const std::vector<Copy*>& list, int64_t exposed,
              int64_t blocked, int64_t kernel_busy, FindingSink& sink) const {
    struct Group { int64_t count = 0, bytes = 0, blocked = 0, exposed = 0; std::map<std::string, int64_t> apis; };
    std::map<Why, Group> groups;
    std::map<std::string, int64_t> ops;  // op name -> exposed ns
    int64_t example = -1, example_exposed = -1;
    int64_t first = INT64_MAX, last = -1;
    for (const Copy* c : list) {
      Group& g = groups[c->why];
      ++g.count;
      g.bytes += c->bytes;
      g.blocked += c->block_end - c->api_start;
      g.exposed += c->exposed;
      ++g.apis[c->why == Why::waited ? c->api + " + " + c->waited_by : c->api];
      if (!c->op.empty() && !c->op.starts_with("unassociated:")) ops[c->op] += c->exposed;
      if (c->exposed > example_exposed) {
        example_exposed = c->exposed;
        example = c->memcpy_id;
      }
      if (c->iteration) {
        first = std::min(first, *c->iteration);
        last = std::max(last, *c->iteration);
      }
    }
    static const std::map<Why, std::string> label = {
        {Why::sync_api, "copies by a synchronous API (no Async suffix)"},
        {Why::pageable_dtoh, "device-to-pageable copies (always synchronous)"},
        {Why::pageable_htod, "large pageable host-to-device copies (return only once staged)"},
        {Why::waited, "async copies waited for at once"}};
    auto apis_of = [](const Group& g) {
      std::string s;
      for (const auto& [name, n] : g.apis) s += fmt::format("{}{} ×{}", s.empty() ? "" : ", ", name, n);
      return s;
    };
    std::string parts;
    for (const auto& [why, g] : groups)
      parts += fmt::format("{}{} {} ({}; {}): host blocked {}, transfers alone on the GPU {}", parts.empty() ? "" : "; ",
                           g.count, label.at(why), apis_of(g), format_bytes(g.bytes), format_ns(g.blocked), format_ns(g.exposed));
    const double wall = static_cast<double>(summary.wall_ns);
    Finding f = make_finding(FindingScope::of_trace(trace_id).on_device(device).over_iterations_seen(first, last));
    f.problem = fmt::format(
        "{} synchronous copies to/from GPU {} blocked the host {} ({} of wall time); for {} ({}) of it the transfers ran "
        "with no kernel beside them, overlapped by neither host work nor compute: {}.",
        list.size(), device, format_ns(blocked), format_percent(static_cast<double>(blocked) / wall), format_ns(exposed),
        format_percent(static_cast<double>(exposed) / wall), parts);
    f.recommendation =
        "Make the copies asynchronous and overlap them: PyTorch — copy from pinned memory with "
        "tensor.to(device, non_blocking=True) (DataLoader(pin_memory=True) or tensor.pin_memory()), prefetch the next "
        "batch on a side torch.cuda.Stream, and keep .cpu()/.item()/.numpy() out of the step (read results every N "
        "steps, or copy with non_blocking=True into a pinned buffer and wait on a torch.cuda.Event only when the value "
        "is needed). CUDA — use cudaMemcpyAsync with page-locked buffers (cudaHostAlloc/cudaHostRegister) on a "
        "non-default stream, split large transfers into chunks and double-buffer them against kernels on another stream; "
        "synchronize with events (cudaStreamWaitEvent) instead of cudaMemcpy/cudaStreamSynchronize. TensorFlow: "
        "tf.data prefetch_to_device / experimental.copy_to_device.";
    // An async copy can hide behind compute: at most the exposed time, and no more than the kernel
    // time there is to hide it behind.
    int64_t est = static_cast<int64_t>(overlap_fraction_ * static_cast<double>(exposed));
    f.estimated_savings_ns = std::min(est, kernel_busy);
    // Each copy's part of the estimate, in proportion to its exposed time: pageable-memcpy claims the
    // same copies, and ranking counts a copy's saving once.
    {
      std::vector<int64_t> ids, exposed_each;
      for (const Copy* c : list) {
        ids.push_back(c->memcpy_id);
        exposed_each.push_back(c->exposed);
      }
      claim_in_proportion(f, "memcpy", ids, exposed_each);
      SourceSites sites(facts, trace_id, "host blocked");
      for (const Copy* c : list) sites.add_memcpy(c->memcpy_id, c->block_end - c->api_start);
      attach_locations(f, sites.top(5));
    }
    f.savings_method = fmt::format(
        "host-blocked copy time during which no kernel ran on the GPU x {:.2f} (overlap_fraction: the part an async, "
        "pinned, pipelined copy hides behind compute), capped at the GPU's kernel time",
        overlap_fraction_);
    f.confidence = 0.5;
    f.evidence["device_id"] = device;
    f.evidence["copies"] = static_cast<int64_t>(list.size());
    f.evidence["host_blocked_ns"] = blocked;
    f.evidence["exposed_ns"] = exposed;
    f.evidence["kernel_busy_ns"] = kernel_busy;
    for (const auto& [why, g] : groups) {
      static const std::map<Why, std::string> key = {
          {Why::sync_api, "sync_api"}, {Why::pageable_dtoh, "pageable_dtoh"}, {Why::pageable_htod, "pageable_htod"}, {Why::waited, "async_then_sync"}};
      f.evidence[key.at(why)] = {{"count", g.count}, {"bytes", g.bytes}, {"host_blocked_ns", g.blocked},
                                 {"exposed_ns", g.exposed}, {"apis", apis_of(g)}};
    }
    if (!ops.empty()) {
      std::vector<std::pair<std::string, int64_t>> v(ops.begin(), ops.end());
      std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
      std::string s;
      for (size_t i = 0; i < v.size() && i < 3; ++i) s += fmt::format("{}{} ({})", i ? ", " : "", v[i].first, format_ns(v[i].second));
      f.evidence["ops"] = s;
    }
    f.evidence["example_memcpy_id"] = example;
    sink.report(std::move(f));
  }

  double min_share_;
  int64_t min_exposed_ns_;
  int64_t small_htod_bytes_;
  int64_t wait_gap_ns_;
  double overlap_fraction_;
};

}  // namespace

DetectorInfo sync_memcpy_info() {
  return {"sync-memcpy",
          {{"min_share", 0.005, "report when exposed synchronous copy time is at least this share of wall time"},
           {"min_exposed_ns", 1000000, "and at least this long in total (ns)"},
           {"small_htod_bytes", 65536,
            "host-to-device copies up to this size return at once even without Async (nsys cuda_memcpy_sync: 64 KB)"},
           {"wait_gap_ns", 20000, "an async copy followed this soon by a stream/device sync on the same thread is synchronous"},
           {"overlap_fraction", 0.5, "share of the exposed copy time an asynchronous, pipelined copy is assumed to hide"}},
          [](const OptionValues& o) { return std::make_unique<SyncMemcpy>(o); }};
}

}  // namespace proflint
