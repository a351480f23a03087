// detectors/communication_bound.cpp — communication-bound
// Flags devices whose collective communication (NCCL/RCCL/gloo kernels) takes a large share of the
// step without being hidden behind compute, and says why: many tiny collectives (gradients not
// bucketed), no overlap, or a slow link / waiting for other ranks.
// Docs: docs/detectors/communication-bound.md
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "engine/analysis/detector.hpp"
#include "engine/common/format.hpp"
#include "engine/common/intervals.hpp"

namespace proflint {

namespace {

// One collective kernel with what the host side says about it.
struct Collective {
  int64_t id = 0, device = 0, start = 0, end = 0;
  std::string name;    // kernel name
  std::string type;    // all_reduce, all_gather, ... ('other' when nothing says)
  std::string pass;    // op pass of the launching op: fwd, bwd, optimizer, other
  int64_t bytes = -1;  // message size when the nccl:* annotation recorded shapes and dtype
  int64_t iteration = -1;
};

// 'nccl:_all_gather_base' -> 'all_gather'; kernel 'ncclDevKernel_AllReduce_Sum_f32_RING_LL' -> 'all_reduce'.
std::string collective_type(std::string_view text) {
  std::string s;
  for (char c : text)
    if (c != '_') s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // Order matters: 'reducescatter' and 'allreduce' contain 'reduce'.
  static const std::pair<const char*, const char*> table[] = {
      {"alltoall", "all_to_all"},  {"reducescatter", "reduce_scatter"},
      {"allreduce", "all_reduce"}, {"allgather", "all_gather"},
      {"broadcast", "broadcast"},  {"sendrecv", "send_recv"},
      {"send", "send_recv"},       {"recv", "send_recv"},
      {"reduce", "reduce"},        {"barrier", "barrier"}};
  for (const auto& [needle, type] : table)
    if (s.find(needle) != std::string::npos) return type;
  return "unidentified";
}

// Bytes per element of a recorded dtype ('float', 'c10::BFloat16', 'long int' ...); 0 when unknown.
int dtype_bytes(std::string t) {
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  if (t.find("float8") != std::string::npos || t.find("bool") != std::string::npos ||
      t.find("char") != std::string::npos || t == "uint8" || t == "int8")
    return 1;
  if (t.find("half") != std::string::npos || t.find("bfloat16") != std::string::npos ||
      t.find("short") != std::string::npos)
    return 2;
  if (t.find("double") != std::string::npos || t.find("long") != std::string::npos ||
      t.find("int64") != std::string::npos)
    return 8;
  if (t.find("float") != std::string::npos || t.find("int") != std::string::npos) return 4;
  return 0;
}

// Elements of all tensors in a Kineto 'Input Dims' text such as [[2873320]] or [[[4,5]],[]].
// Scalars and empty lists count as nothing; returns -1 when there is no tensor at all.
int64_t element_count(std::string_view dims) {
  int64_t total = 0, current = 1;
  int depth = 0, innermost = 0;
  bool any = false, in_number = false, list_has_number = false;
  int64_t number = 0;
  // Innermost lists hold the sizes of one tensor; multiply inside them, add across them.
  for (char c : dims) {
    if (c >= '0' && c <= '9') {
      number = number * 10 + (c - '0');
      in_number = true;
      continue;
    }
    if (in_number) {
      current *= number;
      number = 0;
      in_number = false;
      list_has_number = true;
    }
    if (c == '[') {
      ++depth;
      innermost = depth;
      current = 1;
      list_has_number = false;
    } else if (c == ']') {
      if (depth == innermost && list_has_number) {
        total += current;
        any = true;
      }
      list_has_number = false;
      --depth;
      innermost = depth;
    }
  }
  return any ? total : -1;
}

// First quoted dtype of a Kineto 'Input type' JSON text, e.g. ["c10::BFloat16"].
std::string first_dtype(std::string_view types) {
  auto a = types.find('"');
  if (a == std::string_view::npos) return "";
  auto b = types.find('"', a + 1);
  if (b == std::string_view::npos) return "";
  return std::string(types.substr(a + 1, b - a - 1));
}

int64_t median_of(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string gbps(double bytes_per_ns) { return fmt::format("{:.1f} GB/s", bytes_per_ns); }

// 2020 -> "2,020".
std::string count_text(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

// 404 -> "404", 5.667 -> "5.7".
std::string rate_text(double v) {
  return std::fabs(v - std::round(v)) < 0.05 ? count_text(static_cast<int64_t>(std::llround(v)))
                                             : fmt::format("{:.1f}", v);
}

// Waiting for peers inside this device's collectives, from the job tables (schema 0005) when the
// job's other ranks were analysed with it: per collective kernel, the time before the last rank
// arrived. Intervals are on this trace's own clock.
struct PeerWait {
  bool present = false;                 // the job's collectives were matched for this trace
  int64_t ranks_present = 0;
  std::optional<int64_t> world_size;
  std::map<int64_t, int64_t> by_kernel;  // kernel id -> wait ns
  std::vector<Interval> intervals;       // union of the waits
};

PeerWait peer_wait(const Facts& facts, int64_t trace_id, int64_t device) {
  PeerWait w;
  auto& db = facts.db();
  {
    SQLite::Statement t(db, "SELECT 1 FROM sqlite_master WHERE name = 'collective_participation'");
    if (!t.executeStep()) return w;
  }
  SQLite::Statement j(db,
                      "SELECT j.ranks_present, j.world_size, j.aligned FROM job j JOIN job_rank r ON r.job_id = j.job_id "
                      "WHERE r.trace_id = ?1 LIMIT 1");
  j.bind(1, trace_id);
  if (!j.executeStep()) return w;
  w.ranks_present = j.getColumn(0).getInt64();
  if (!j.getColumn(1).isNull()) w.world_size = j.getColumn(1).getInt64();
  if (j.getColumn(2).getInt() == 0 || w.ranks_present < 2) return w;
  SQLite::Statement q(db,
                      "SELECT p.kernel_id, p.start_ns - r.clock_offset_ns, p.wait_ns FROM collective_participation p "
                      "JOIN job_rank r ON r.job_id = p.job_id AND r.rank = p.rank JOIN kernel k ON k.id = p.kernel_id "
                      "WHERE p.trace_id = ?1 AND k.device_id = ?2");
  q.bind(1, trace_id);
  q.bind(2, device);
  std::vector<Interval> v;
  while (q.executeStep()) {
    w.present = true;
    int64_t start = q.getColumn(1).getInt64(), wait = q.getColumn(2).getInt64();
    w.by_kernel[q.getColumn(0).getInt64()] = wait;
    v.push_back({start, start + wait});
  }
  w.intervals = union_intervals(std::move(v));
  return w;
}

class CommunicationBound final : public Detector {
 public:
  explicit CommunicationBound(const OptionValues& o)
      : min_exposed_share_(o.number("min_exposed_share")),
        recoverable_fraction_(o.number("recoverable_fraction")),
        unbucketed_recoverable_(o.number("unbucketed_recoverable_fraction")),
        many_collectives_(o.number("many_collectives_per_iteration")),
        small_message_bytes_(o.number("small_message_bytes")),
        short_kernel_ns_(o.number("short_kernel_us") * 1000.0),
        low_overlap_(o.number("low_overlap_ratio")),
        low_busbw_gbps_(o.number("low_bus_bandwidth_gbps")) {}

  std::string_view id() const override { return "communication-bound"; }
  std::string_view title() const override { return "Collective communication takes a large share of the step"; }
  std::vector<std::string> needs() const override { return {"kernels"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* summary = facts.summary(trace_id);
    if (!summary) return;
    std::vector<Collective> colls = read_collectives(facts, trace_id);
    if (colls.empty()) return;
    std::map<int64_t, std::vector<const Collective*>> by_device;
    for (const auto& c : colls) by_device[c.device].push_back(&c);
    for (const auto& [device, list] : by_device) {
      const DeviceSummary* ds = nullptr;
      for (const auto& d : summary->devices)
        if (d.device_id == device) ds = &d;
      if (!ds || ds->window_ns <= 0) continue;
      report_device(facts, *summary, *ds, list, sink);
    }
  }

 private:
  std::vector<Collective> read_collectives(const Facts& facts, int64_t trace_id) const {
    auto& db = facts.db();
    // Host-side annotations PyTorch puts around each collective: nccl:all_reduce, gloo:broadcast ...
    struct Annotation {
      int64_t start, end;
      std::string type;
      int64_t bytes;
    };
    std::map<std::pair<int64_t, int64_t>, std::vector<Annotation>> by_thread;
    {
      // The ranges are found through range_by_name (the few collective names) instead of a walk
      // of range_by_thread over every range; ", id" keeps that walk's order among equal starts.
      SQLite::Statement q(db,
                          "SELECT pid, tid, start_ns, end_ns, name, input_dims, input_types FROM range "
                          "WHERE +trace_id = ? AND name_id IN (SELECT id FROM string WHERE value LIKE 'nccl:%' OR "
                          "value LIKE 'gloo:%' OR value LIKE 'rccl:%') "
                          "AND kind <> 'gpu_user_annotation' ORDER BY pid, tid, start_ns, id");
      q.bind(1, trace_id);
      while (q.executeStep()) {
        std::string name = q.getColumn(4).getString();
        int64_t bytes = -1;
        if (!q.getColumn(5).isNull() && !q.getColumn(6).isNull()) {
          int64_t elements = element_count(q.getColumn(5).getString());
          int size = dtype_bytes(first_dtype(q.getColumn(6).getString()));
          if (elements >= 0 && size > 0) bytes = elements * size;
        }
        by_thread[{q.getColumn(0).getInt64(), q.getColumn(1).getInt64()}].push_back(
            {q.getColumn(2).getInt64(), q.getColumn(3).getInt64(), collective_type(name.substr(name.find(':') + 1)),
             bytes});
      }
    }
    std::vector<Collective> out;
    SQLite::Statement q(
        db,
        "SELECT k.id, k.device_id, k.start_ns, k.end_ns, k.name, o.pass, k.iteration, a.pid, a.tid, a.start_ns "
        "FROM kernel k LEFT JOIN _op o ON o.id = k.op_id LEFT JOIN _api_call a ON a.id = k.api_call_id "
        "WHERE k.trace_id = ? AND k.category = 'communication' AND k.device_id IS NOT NULL ORDER BY k.start_ns, k.id");
    q.bind(1, trace_id);
    while (q.executeStep()) {
      Collective c;
      c.id = q.getColumn(0).getInt64();
      c.device = q.getColumn(1).getInt64();
      c.start = q.getColumn(2).getInt64();
      c.end = q.getColumn(3).getInt64();
      c.name = q.getColumn(4).getString();
      c.pass = q.getColumn(5).isNull() ? "other" : q.getColumn(5).getString();
      c.iteration = q.getColumn(6).isNull() ? -1 : q.getColumn(6).getInt64();
      c.type = collective_type(c.name);
      if (!q.getColumn(7).isNull() && !q.getColumn(8).isNull()) {
        // The annotation enclosing the launch call on its thread names the collective and its size.
        auto it = by_thread.find({q.getColumn(7).getInt64(), q.getColumn(8).getInt64()});
        int64_t t = q.getColumn(9).getInt64();
        if (it != by_thread.end()) {
          const auto& v = it->second;
          auto after =
              std::upper_bound(v.begin(), v.end(), t, [](int64_t x, const Annotation& a) { return x < a.start; });
          // Annotations nest rarely; look back over a few in case the nearest one ended before t.
          for (int back = 0; back < 4 && after != v.begin(); ++back) {
            --after;
            if (after->start <= t && t <= after->end) {
              if (after->type != "unidentified" || c.type == "unidentified") c.type = after->type;
              c.bytes = after->bytes;
              break;
            }
          }
        }
      }
      out.push_back(std::move(c));
    }
    return out;
  }

  void report_device(const Facts& facts, const TraceSummary& summary, const DeviceSummary& ds,
                     const std::vector<const Collective*>& list, FindingSink& sink) const {
    auto get = [&](const char* cat) {
      auto it = ds.breakdown_ns.find(cat);
      return it == ds.breakdown_ns.end() ? int64_t{0} : it->second;
    };
    // The breakdown's 'communication' is already the exposed part: communication ranks below compute.
    const int64_t exposed_all = get("communication");
    const int64_t window = ds.window_ns;
    // With the job's other ranks present, waiting for them is not communication: only the transfer
    // (the part after the last rank arrived) counts here; the wait goes to rank-straggler.
    const PeerWait peers = peer_wait(facts, summary.trace_id, ds.device_id);
    int64_t wait_sum = 0, exposed_wait = 0;
    if (peers.present) {
      for (const auto& [k, w] : peers.by_kernel) wait_sum += w;
      std::vector<Interval> busy;
      SQLite::Statement q(facts.db(),
                          "SELECT start_ns, end_ns FROM kernel WHERE trace_id = ?1 AND device_id = ?2 AND category IS NOT 'communication' "
                          "UNION ALL SELECT start_ns, end_ns FROM memcpy WHERE trace_id = ?1 AND device_id = ?2 "
                          "UNION ALL SELECT start_ns, end_ns FROM memset WHERE trace_id = ?1 AND device_id = ?2");
      q.bind(1, summary.trace_id);
      q.bind(2, ds.device_id);
      while (q.executeStep()) busy.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64()});
      exposed_wait = total_length(peers.intervals) - total_length(intersect_intervals(peers.intervals, union_intervals(std::move(busy))));
    }
    const int64_t exposed = std::max<int64_t>(0, exposed_all - exposed_wait);
    const double exposed_share = static_cast<double>(exposed) / static_cast<double>(window);
    if (exposed_share < min_exposed_share_) {
      sink.below_threshold(checked_below(*this, summary.trace_id, ds.device_id,
                                         peers.present ? "communication transfer time not overlapped by compute (waiting for "
                                                         "other ranks excluded)"
                                                       : "communication time not overlapped by compute",
                                         exposed_share, min_exposed_share_, "share of the GPU's window"));
      return;
    }

    // Overlap with compute as HTA defines it: |merged comm ∩ merged compute| / merged comm.
    std::vector<Interval> comm;
    int64_t comm_sum = 0;
    for (const auto* c : list) {
      comm.push_back({c->start, c->end});
      comm_sum += c->end - c->start;
    }
    comm = union_intervals(std::move(comm));
    const int64_t comm_busy = total_length(comm);
    std::vector<Interval> compute;
    {
      SQLite::Statement q(facts.db(),
                          "SELECT start_ns, end_ns FROM kernel WHERE trace_id = ? AND device_id = ? AND category IS "
                          "NOT 'communication' "
                          "AND end_ns > ? AND start_ns < ?");
      q.bind(1, summary.trace_id);
      q.bind(2, ds.device_id);
      q.bind(3, comm.front().start);
      q.bind(4, comm.back().end);
      while (q.executeStep()) compute.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64()});
    }
    const int64_t overlap = total_length(intersect_intervals(comm, union_intervals(std::move(compute))));
    const double overlap_ratio = comm_busy > 0 ? static_cast<double>(overlap) / static_cast<double>(comm_busy) : 0.0;

    // Count, kind and size of the collectives.
    std::map<std::string, int64_t> type_count, type_time;
    std::map<std::string, std::pair<int64_t, int64_t>> kernels;  // name -> (count, time)
    std::vector<int64_t> durations, sizes;
    int64_t bwd = 0, short_kernels = 0, small_messages = 0, total_bytes = 0;
    std::vector<double> busbw;  // GB/s of large all-reduce-like messages
    const double world = summary.world_size && *summary.world_size > 1 ? static_cast<double>(*summary.world_size) : 0.0;
    for (const auto* c : list) {
      ++type_count[c->type];
      type_time[c->type] += c->end - c->start;
      auto& k = kernels[c->name];
      ++k.first;
      k.second += c->end - c->start;
      durations.push_back(c->end - c->start);
      if (c->end - c->start < short_kernel_ns_) ++short_kernels;
      if (c->pass == "bwd") ++bwd;
      if (c->bytes >= 0) {
        sizes.push_back(c->bytes);
        total_bytes += c->bytes;
        if (static_cast<double>(c->bytes) < small_message_bytes_) ++small_messages;
        // NCCL's bus bandwidth (nccl-tests): algbw x 2(n-1)/n for all-reduce, x (n-1)/n for gathers/scatters.
        double dur = static_cast<double>(c->end - c->start);
        if (auto w = peers.by_kernel.find(c->id); w != peers.by_kernel.end()) dur -= static_cast<double>(w->second);
        if (world > 0 && dur > 0 && static_cast<double>(c->bytes) >= small_message_bytes_) {
          // reduce_scatter is left out: its annotation records the output shard, not the message nccl-tests measures.
          double factor = c->type == "all_reduce"                                ? 2.0 * (world - 1) / world
                          : (c->type == "all_gather" || c->type == "all_to_all") ? (world - 1) / world
                                                                                 : 0.0;
          if (factor > 0) busbw.push_back(static_cast<double>(c->bytes) / dur * factor);
        }
      }
    }
    const int64_t n = static_cast<int64_t>(list.size());
    const int64_t iterations = summary.iterations.count > 0 ? summary.iterations.count : 0;
    int64_t in_iterations = 0;
    for (const auto* c : list) in_iterations += c->iteration >= 0;
    const double per_iteration =
        iterations > 0 ? static_cast<double>(in_iterations) / static_cast<double>(iterations) : static_cast<double>(n);
    const int64_t median_dur = median_of(durations);
    const bool sizes_known = sizes.size() * 2 >= list.size();
    const int64_t median_size = median_of(sizes);
    const bool small = sizes_known ? static_cast<double>(median_size) < small_message_bytes_
                                   : static_cast<double>(median_dur) < short_kernel_ns_;
    const bool many_small = per_iteration >= many_collectives_ && small;
    auto count_of = [&](const char* t) {
      auto it = type_count.find(t);
      return it == type_count.end() ? int64_t{0} : it->second;
    };
    const bool gradient_sync = bwd * 2 >= n || (count_of("all_reduce") * 2 >= n && count_of("all_reduce") > 0);
    const bool low_overlap = overlap_ratio < low_overlap_;
    double median_busbw = 0;
    if (!busbw.empty()) {
      std::sort(busbw.begin(), busbw.end());
      median_busbw = busbw[busbw.size() / 2];
    }
    const bool slow_link = !busbw.empty() && median_busbw < low_busbw_gbps_;

    std::string types;
    {
      std::vector<std::pair<int64_t, std::string>> t;  // by time, longest first
      for (const auto& [name, time] : type_time) t.push_back({-time, name});
      std::sort(t.begin(), t.end());
      for (const auto& [neg, name] : t)
        types += fmt::format("{}{} {} {}", types.empty() ? "" : ", ", count_text(type_count.at(name)), name,
                             format_ns(-neg));
    }
    const double kernel_share =
        ds.kernel_time_ns > 0 ? static_cast<double>(comm_sum) / static_cast<double>(ds.kernel_time_ns) : 0.0;

    Finding f = make_finding(FindingScope::of_trace(summary.trace_id)
                                 .on_device(ds.device_id)
                                 .of_rank(summary.rank)
                                 .over_iterations_seen(0, iterations - 1));
    if (peers.present)
      f.problem = fmt::format(
          "Collective communication kernels ran {} on GPU {} ({} of its kernel time); {} of that was waiting for the job's "
          "other ranks to arrive ({} of it exposed; rank-straggler reports it) and is not counted here. The transfer that "
          "remains was exposed for {} ({} of the {} window), with no compute kernel running beside it (overlap ratio {}). "
          "{} collective kernels ({})",
          format_ns(comm_sum), ds.device_id, format_percent(kernel_share), format_ns(wait_sum), format_ns(exposed_wait),
          format_ns(exposed), format_percent(exposed_share), format_ns(window), format_percent(overlap_ratio), count_text(n),
          types);
    else
      f.problem = fmt::format(
          "Collective communication kernels ran {} on GPU {} ({} of its kernel time); {} of it ({} of the {} window) was "
          "exposed, "
          "with no compute kernel running beside it (overlap ratio {}). {} collective kernels ({})",
          format_ns(comm_sum), ds.device_id, format_percent(kernel_share), format_ns(exposed),
          format_percent(exposed_share), format_ns(window), format_percent(overlap_ratio), count_text(n), types);
    if (iterations > 0)
      f.problem += fmt::format(", {} per iteration over {} iterations", rate_text(per_iteration), iterations);
    f.problem += fmt::format("; median kernel {}, {} shorter than {}", format_ns(median_dur), count_text(short_kernels),
                             format_ns(static_cast<int64_t>(short_kernel_ns_)));
    if (sizes_known)
      f.problem += fmt::format("; median message {}, {} of {} messages under {}, {} in all", format_bytes(median_size),
                               count_text(small_messages), count_text(static_cast<int64_t>(sizes.size())),
                               format_bytes(static_cast<int64_t>(small_message_bytes_)), format_bytes(total_bytes));
    f.problem += ".";
    if (many_small)
      f.problem += fmt::format(
          " So many small collectives per iteration means the gradients are not bucketed (or the buckets are tiny): "
          "each call pays NCCL's fixed latency and a launch.");
    if (slow_link)
      f.problem += peers.present
                       ? fmt::format(" Messages of {} or more reach only {} bus bandwidth (median, over the transfer part "
                                     "alone), far below NVLink/xGMI (hundreds of GB/s) or InfiniBand (about 12 GB/s per "
                                     "100 Gb/s port): the data crosses a slow link.",
                                     format_bytes(static_cast<int64_t>(small_message_bytes_)), gbps(median_busbw))
                       : fmt::format(
                             " Messages of {} or more reach only {} bus bandwidth (median), far below NVLink/xGMI "
                             "(hundreds of GB/s) or InfiniBand (about 12 GB/s per 100 Gb/s port): the kernels are mostly "
                             "waiting for other ranks, or the data crosses a slow link.",
                             format_bytes(static_cast<int64_t>(small_message_bytes_)), gbps(median_busbw));
    // Only this rank of a larger job: estimate the wait from the rank alone. Collectives of one
    // kind and size move the same bytes over the same links, so the fastest of them is close to
    // pure transfer and each one's excess over it is mostly waiting for the other ranks.
    int64_t est_wait = 0, est_basis = 0, est_basis_ns = 0;
    const std::optional<int64_t> world_size = summary.world_size ? summary.world_size : peers.world_size;
    // Also with some ranks present (sampled ranks of a large job): the part after the last present
    // rank arrived can still be waiting for an absent one, so the estimate runs on that part.
    const bool ranks_missing = world_size && *world_size > std::max<int64_t>(1, peers.ranks_present);
    if (ranks_missing) {
      std::map<std::string, std::vector<int64_t>> groups;
      for (const auto* c : list) {
        auto w = peers.by_kernel.find(c->id);
        groups[c->bytes >= 0 ? fmt::format("{}:{}", c->type, c->bytes) : c->name].push_back(
            c->end - c->start - (w == peers.by_kernel.end() ? 0 : w->second));
      }
      for (auto& [key, durs] : groups) {
        if (durs.size() < 3) continue;
        // The 10th percentile, not the minimum: one lucky instance should not set the transfer time.
        std::sort(durs.begin(), durs.end());
        const int64_t transfer = durs[durs.size() / 10];
        for (int64_t d : durs) est_wait += std::max<int64_t>(0, d - transfer), est_basis_ns += d;
        est_basis += static_cast<int64_t>(durs.size());
      }
      f.problem += fmt::format(" Only {} of the job's {} ranks {} here, so waiting for the {} cannot be measured",
                               std::max<int64_t>(1, peers.ranks_present), *world_size,
                               std::max<int64_t>(1, peers.ranks_present) == 1 ? "is" : "are",
                               peers.present ? "absent ones" : "others");
      if (est_basis > 0)
        f.problem += fmt::format(
            "; estimated from this rank alone (each collective against the 10th percentile of its kind and size, or of its "
            "kernel when sizes are not recorded; {} of {} collectives in groups of three or more), {} of their {} looks like "
            "waiting for other ranks and {} like transfer.",
            count_text(est_basis), count_text(n), format_ns(est_wait), format_ns(est_basis_ns), format_ns(est_basis_ns - est_wait));
      else
        f.problem += ".";
    }

    std::string rec;
    if (many_small && gradient_sync)
      rec +=
          "Bucket the gradient all-reduces: wrap the model in DistributedDataParallel(model, bucket_cap_mb=25 or more, "
          "gradient_as_bucket_view=True) instead of all-reducing each parameter yourself (or in per-parameter hooks); "
          "with "
          "torch.compile keep DDP's graph splitting on (torch._dynamo.config.optimize_ddp = True). Accumulate "
          "gradients over k "
          "micro-batches inside `with model.no_sync():` so only every k-th backward all-reduces. ";
    else if (many_small)
      rec +=
          "Batch the small collectives: coalesce tensors before communicating (one flat buffer, or "
          "torch.distributed all_reduce_coalesced / a DDP comm hook), and issue fewer, larger calls. ";
    if (low_overlap)
      rec +=
          "Overlap communication with compute: with DDP the all-reduce of a bucket starts while backward continues, so "
          "keep "
          "find_unused_parameters=False and set static_graph=True when the graph does not change; with FSDP use "
          "FullyShardedDataParallel(..., backward_prefetch=BackwardPrefetch.BACKWARD_PRE, forward_prefetch=True). ";
    // All-to-all (embedding tables, mixture-of-experts dispatch) is overlapped differently from gradient all-reduce.
    if (auto a2a = type_time.find("all_to_all"); a2a != type_time.end() && a2a->second * 2 >= comm_sum)
      rec +=
          "Most of the time is all-to-all: for TorchRec embedding sharding use the pipelined trainer "
          "(torchrec.distributed.train_pipeline.TrainPipelineSparseDist) so the input/embedding all-to-all of the next "
          "batch "
          "overlaps the current batch's compute, and revisit the sharding plan (fewer row-wise/table-wise shards that "
          "exchange less); for mixture-of-experts, overlap token dispatch/combine with expert compute and keep the "
          "capacity factor low. ";
    // AMD GPUs run RCCL, which reads NCCL's variables, over xGMI; their topology comes from rocm-smi.
    const bool amd = summary.vendor && *summary.vendor == "amd";
    if (slow_link && amd)
      rec +=
          "Check the interconnect: run with NCCL_DEBUG=INFO (RCCL reads NCCL's variables) to see the transport (P2P/xGMI, "
          "NET/IB or NET/Socket), make sure NCCL_P2P_DISABLE / NCCL_IB_DISABLE are not set, and check "
          "`rocm-smi --showtopo`. ";
    else if (slow_link)
      rec +=
          "Check the interconnect: run with NCCL_DEBUG=INFO to see the transport (P2P/NVLink, NET/IB or NET/Socket), "
          "make sure "
          "NCCL_P2P_DISABLE / NCCL_IB_DISABLE are not set, and check `nvidia-smi topo -m`. ";
    if (ranks_missing || (!peers.present && !world_size))
      rec += "Profile all ranks together (proflint analyze rank0.json rank1.json …): time spent waiting for a late rank "
             "is not fixed by communication tuning. ";
    rec +=
        "To send fewer bytes: compress gradients with a DDP comm hook "
        "(model.register_comm_hook(state=None, "
        "hook=torch.distributed.algorithms.ddp_comm_hooks.default_hooks.bf16_compress_hook), "
        "or PowerSGD), or raise the per-GPU batch size so each step computes more per byte exchanged (larger global "
        "batches can "
        "change convergence). TensorFlow: tf.distribute.MirroredStrategy with "
        "tf.distribute.experimental.CommunicationOptions(bytes_per_pack=…) packs small gradients together.";
    f.recommendation = rec;

    // Many tiny latency-bound gradient collectives: bucketing replaces them by a few calls carrying
    // the same (small) bytes, so most of their exposed time goes, not half of it (hta_ddp_v100_rank1:
    // 2,020 unbucketed all-reduces, 357 ms fully exposed).
    const bool unbucketed = many_small && gradient_sync;
    const double fraction = unbucketed ? unbucketed_recoverable_ : recoverable_fraction_;
    f.estimated_savings_ns = static_cast<int64_t>(static_cast<double>(exposed) * fraction);
    f.savings_method = fmt::format(
        "exposed communication time (not overlapped with compute) x {:.2f}, the share assumed recoverable by "
        "{} (option {})",
        fraction, unbucketed ? "bucketing many tiny latency-bound collectives" : "bucketing, overlap or fewer bytes",
        unbucketed ? "unbucketed_recoverable_fraction" : "recoverable_fraction");
    f.confidence = many_small || low_overlap ? 0.7 : 0.6;

    f.evidence["communication_time_ns"] = comm_sum;
    f.evidence["kernel_time_ns"] = ds.kernel_time_ns;
    f.evidence["communication_share_of_kernel_time"] = kernel_share;
    f.evidence["exposed_ns"] = exposed;
    if (peers.present) {
      f.evidence["peer_wait_ns"] = wait_sum;
      f.evidence["exposed_peer_wait_ns"] = exposed_wait;
      f.evidence["exposed_including_wait_ns"] = exposed_all;
    }
    if (ranks_missing) {
      f.evidence["ranks_present"] = std::max<int64_t>(1, peers.ranks_present);
      f.evidence["world_size"] = *world_size;
      if (est_basis > 0) {
        f.evidence["estimated_wait_ns"] = est_wait;
        f.evidence["estimated_transfer_ns"] = est_basis_ns - est_wait;
        f.evidence["estimate_basis_collectives"] = est_basis;
      }
    }
    f.evidence["exposed_share"] = exposed_share;
    f.evidence["window_ns"] = window;
    f.evidence["merged_communication_ns"] = comm_busy;
    f.evidence["overlap_ns"] = overlap;
    f.evidence["overlap_ratio"] = overlap_ratio;
    f.evidence["collectives"] = n;
    if (iterations > 0) f.evidence["collectives_per_iteration"] = per_iteration;
    nlohmann::ordered_json by_type = nlohmann::ordered_json::object();
    for (const auto& [t, c] : type_count) by_type[t] = c;
    f.evidence["collectives_by_type"] = by_type;
    nlohmann::ordered_json time_by_type = nlohmann::ordered_json::object();
    for (const auto& [t, ns] : type_time) time_by_type[t] = ns;
    f.evidence["time_by_type_ns"] = time_by_type;
    f.evidence["backward_collectives"] = bwd;
    f.evidence["median_kernel_ns"] = median_dur;
    f.evidence["short_kernels"] = short_kernels;
    if (sizes_known) {
      f.evidence["median_message_bytes"] = median_size;
      f.evidence["small_messages"] = small_messages;
      f.evidence["total_bytes"] = total_bytes;
    }
    if (!busbw.empty()) f.evidence["median_bus_bandwidth_gbps"] = median_busbw;
    f.evidence["many_small_collectives"] = many_small;
    std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> top(kernels.begin(), kernels.end());
    std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
      return a.second.second > b.second.second || (a.second.second == b.second.second && a.first < b.first);
    });
    nlohmann::ordered_json tk = nlohmann::ordered_json::array();
    for (size_t i = 0; i < top.size() && i < 3; ++i)
      tk.push_back(fmt::format("{} ×{} ({})", top[i].first, top[i].second.first, format_ns(top[i].second.second)));
    f.evidence["top_kernels"] = tk;
    f.evidence["example_kernel_id"] = list.front()->id;
    sink.report(std::move(f));
  }

  double min_exposed_share_;
  double recoverable_fraction_;
  double unbucketed_recoverable_;
  double many_collectives_;
  double small_message_bytes_;
  double short_kernel_ns_;
  double low_overlap_;
  double low_busbw_gbps_;
};

}  // namespace

DetectorInfo communication_bound_info() {
  return {"communication-bound",
          {{"min_exposed_share", 0.10,
            "report when exposed communication takes at least this share of the device's window"},
           {"recoverable_fraction", 0.5, "share of the exposed communication time assumed recoverable"},
           {"unbucketed_recoverable_fraction", 0.8,
            "the same when many small gradient collectives per iteration show that bucketing is missing"},
           {"many_collectives_per_iteration", 50, "collectives per iteration above which small ones count as 'many'"},
           {"small_message_bytes", 1048576, "a message below this many bytes is small (latency-bound)"},
           {"short_kernel_us", 50, "without recorded sizes, a collective kernel shorter than this counts as small"},
           {"low_overlap_ratio", 0.3,
            "overlap ratio (overlap / merged communication time) below which overlap advice is given"},
           {"low_bus_bandwidth_gbps", 10,
            "median bus bandwidth of large messages below which the link or waiting is suspected"}},
          [](const OptionValues& o) { return std::make_unique<CommunicationBound>(o); }};
}

}  // namespace proflint
