// engine/derive/jobs.cpp — see jobs.hpp; the rules are in docs/multi-rank.md.
#include "engine/derive/jobs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "engine/common/error.hpp"

namespace proflint {

namespace {

using opt_i64 = std::optional<int64_t>;

int64_t median_of(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  if (n % 2 == 1) return v[n / 2];
  return v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

std::string ms_text(int64_t ns) { return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6); }

// Bytes per element of a recorded dtype ('Float', 'c10::BFloat16', 'float', 'long int', ...).
opt_i64 dtype_bytes(std::string_view dtype) {
  std::string d;
  for (char c : dtype)
    if (std::isalnum(static_cast<unsigned char>(c))) d += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (d.starts_with("c10")) d = d.substr(3);
  static const std::pair<const char*, int64_t> sizes[] = {
      {"float8", 1}, {"float16", 2}, {"bfloat16", 2}, {"half", 2}, {"float64", 8}, {"double", 8}, {"float32", 4},
      {"float", 4},  {"int64", 8},   {"long", 8},     {"int32", 4}, {"int16", 2},  {"short", 2},  {"int8", 1},
      {"uint8", 1},  {"unsignedchar", 1}, {"char", 1}, {"byte", 1}, {"bool", 1},  {"int", 4}};
  for (const auto& [name, size] : sizes)
    if (d == name) return size;
  if (d.starts_with("float8")) return 1;
  return std::nullopt;
}

// The first element count of a JSON 'Input Dims' text ([[1024, 4], ...] -> 4096).
opt_i64 first_dims_elements(std::string_view dims) {
  size_t open = dims.find("[[");
  if (open == std::string_view::npos) return std::nullopt;
  size_t close = dims.find(']', open + 2);
  if (close == std::string_view::npos || close == open + 2) return std::nullopt;
  int64_t n = 1;
  std::string_view body = dims.substr(open + 2, close - open - 2);
  size_t pos = 0;
  while (pos < body.size()) {
    size_t comma = body.find(',', pos);
    std::string_view item = body.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    char* end = nullptr;
    std::string text(item);
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (end == text.c_str() || v < 0) return std::nullopt;
    if (v != 0 && n > INT64_MAX / v) return std::nullopt;
    n *= v;
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return n;
}

// The first type of a JSON 'Input type' text (["float", "Scalar"] -> float).
std::string first_type(std::string_view types) {
  size_t q1 = types.find('"');
  if (q1 == std::string_view::npos) return {};
  size_t q2 = types.find('"', q1 + 1);
  if (q2 == std::string_view::npos) return {};
  return std::string(types.substr(q1 + 1, q2 - q1 - 1));
}

bool is_backend_range(std::string_view name) {
  for (std::string_view p : {"nccl:", "gloo:", "mpi:", "ucc:", "xccl:", "rccl:"})
    if (name.starts_with(p)) return true;
  return false;
}

// ---- matching ----

// Sizes are compared only where every participant sends the same amount: all-to-all and
// point-to-point carry per-rank sizes.
bool sizes_comparable(const std::string& type) { return type != "all_to_all" && type != "send_recv"; }

// Could a and b be the same collective (same group and type assumed)? Known sizes and step
// numbers must agree (sequence numbers, when trusted, pair calls before this is asked).
bool compatible(const RankCollective& a, const RankCollective& b) {
  if (a.step_number && b.step_number && *a.step_number != *b.step_number) return false;
  if (sizes_comparable(a.type) && a.bytes && b.bytes && *a.bytes != *b.bytes) return false;
  return true;
}

using GroupKey = std::pair<std::string, std::string>;  // (process group, type)
// Per group, per input rank: indices into that rank's calls, sorted by end.
using Groups = std::map<GroupKey, std::vector<std::vector<size_t>>>;

Groups group_calls(const std::vector<RankCollectives>& ranks) {
  Groups groups;
  for (size_t k = 0; k < ranks.size(); ++k)
    for (size_t c = 0; c < ranks[k].calls.size(); ++c) {
      const RankCollective& call = ranks[k].calls[c];
      auto& g = groups[{call.process_group, call.type}];
      if (g.empty()) g.resize(ranks.size());
      g[k].push_back(c);
    }
  for (auto& [key, per_rank] : groups)
    for (size_t k = 0; k < per_rank.size(); ++k)
      std::stable_sort(per_rank[k].begin(), per_rank[k].end(),
                       [&](size_t a, size_t b) { return ranks[k].calls[a].end_ns < ranks[k].calls[b].end_ns; });
  return groups;
}

// Recorded sequence numbers identify the group's instances when every call has one and each
// rank shares at least half of its numbers with the group's first rank (numbers that do not
// recur across ranks are not PyTorch's per-group sequence; order and end times decide then).
bool all_have_seq(const std::vector<RankCollectives>& ranks, const std::vector<std::vector<size_t>>& per_rank) {
  for (size_t k = 0; k < per_rank.size(); ++k)
    for (size_t c : per_rank[k])
      if (!ranks[k].calls[c].seq) return false;
  size_t ref = 0;
  while (ref < per_rank.size() && per_rank[ref].empty()) ++ref;
  if (ref == per_rank.size()) return true;
  std::set<int64_t> ref_seq;
  for (size_t c : per_rank[ref]) ref_seq.insert(*ranks[ref].calls[c].seq);
  for (size_t k = ref + 1; k < per_rank.size(); ++k) {
    if (per_rank[k].empty()) continue;
    size_t shared = 0;
    for (size_t c : per_rank[k]) shared += ref_seq.count(*ranks[k].calls[c].seq);
    if (shared * 2 < std::min(per_rank[k].size(), per_rank[ref].size())) return false;
  }
  return true;
}

// At most this many candidate pairs per group and rank vote on an offset (a band around the
// diagonal beyond it): the vote stays linear in the number of collectives.
constexpr size_t kBand = 256;

// The densest cluster of end differences (width `tol`): the offset most pairs agree on.
std::optional<std::pair<int64_t, size_t>> densest(std::vector<int64_t> d, int64_t tol) {
  if (d.empty()) return std::nullopt;
  std::sort(d.begin(), d.end());
  size_t best_lo = 0, best_n = 0;
  for (size_t lo = 0, hi = 0; lo < d.size(); ++lo) {
    while (hi < d.size() && d[hi] - d[lo] <= tol) ++hi;
    if (hi - lo > best_n) {
      best_n = hi - lo;
      best_lo = lo;
    }
  }
  std::vector<int64_t> cluster(d.begin() + static_cast<std::ptrdiff_t>(best_lo),
                               d.begin() + static_cast<std::ptrdiff_t>(best_lo + best_n));
  return std::make_pair(median_of(cluster), best_n);
}

}  // namespace

int64_t alignment_limit_ns(std::optional<int64_t> median_step_ns) {
  constexpr int64_t kFewMs = 5'000'000, kFloor = 100'000;
  if (!median_step_ns || *median_step_ns <= 0) return kFewMs;
  return std::clamp<int64_t>(*median_step_ns / 10, kFloor, kFewMs);
}

std::string collective_type(std::string_view name) {
  std::string n;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c))) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view p : {"c10d", "nccldevkernel", "ncclkernel", "nccl", "gloo", "rccl", "mpi", "ucc", "xccl"})
    if (n.starts_with(p)) {
      n = n.substr(p.size());
      break;
    }
  auto has = [&](std::string_view s) { return n.find(s) != std::string::npos; };
  if (has("allreduce") || has("multimemallreduce") || has("crossdevicereduce")) return "all_reduce";
  if (has("reducescatter")) return "reduce_scatter";
  if (has("allgather")) return "all_gather";
  if (has("alltoall") || has("all2all")) return "all_to_all";
  if (has("broadcast") || has("bcast")) return "broadcast";
  if (has("barrier")) return "barrier";
  if (has("sendrecv") || n.starts_with("send") || n.starts_with("recv") || n.starts_with("isend") ||
      n.starts_with("irecv") || has("p2p"))
    return "send_recv";
  if (n.starts_with("reduce")) return "reduce";
  return "unidentified";
}

AlignmentResult match_and_align(const std::vector<RankCollectives>& ranks, const AlignOptions& options) {
  AlignmentResult out;
  size_t nranks = ranks.size();
  out.offsets.assign(nranks, 0);
  out.residuals.assign(nranks, std::nullopt);
  if (nranks < 2) {
    out.note = "one rank: nothing to align";
    return out;
  }
  const int64_t limit = alignment_limit_ns(options.median_step_ns);
  const int64_t tol = std::min<int64_t>(1'000'000, limit / 2);  // width of the offset vote's cluster
  Groups groups = group_calls(ranks);
  auto call = [&](size_t k, size_t c) -> const RankCollective& { return ranks[k].calls[c]; };

  // 1. Offsets against the reference (input rank 0), from blocking collectives (not send_recv).
  // With recorded sequence numbers the pairs are known: the offset is the median end difference
  // and its residual is checked. Without, every compatible pair votes with its end difference and
  // the densest cluster wins; its median is the offset.
  std::vector<std::string> notes;
  int64_t worst = 0;
  size_t worst_rank = 0;
  for (size_t k = 1; k < nranks; ++k) {
    std::vector<int64_t> exact, votes;
    size_t shared_ref = 0, shared_k = 0;  // blocking calls in the groups both ranks have
    for (const auto& [key, per_rank] : groups) {
      if (key.second == "send_recv" || per_rank[0].empty() || per_rank[k].empty()) continue;
      const auto& a = per_rank[0];
      const auto& b = per_rank[k];
      shared_ref += a.size();
      shared_k += b.size();
      if (all_have_seq(ranks, per_rank)) {
        std::unordered_map<int64_t, size_t> by_seq;
        for (size_t c : a) by_seq.emplace(*call(0, c).seq, c);
        for (size_t c : b)
          if (auto it = by_seq.find(*call(k, c).seq); it != by_seq.end())
            exact.push_back(call(0, it->second).end_ns - call(k, c).end_ns);
        continue;
      }
      for (size_t i = 0; i < a.size(); ++i) {
        size_t centre = a.size() > 1 ? i * (b.size() - 1) / (a.size() - 1) : 0;
        size_t lo = centre > kBand ? centre - kBand : 0, hi = std::min(b.size(), centre + kBand + 1);
        for (size_t j = lo; j < hi; ++j)
          if (compatible(call(0, a[i]), call(k, b[j]))) votes.push_back(call(0, a[i]).end_ns - call(k, b[j]).end_ns);
      }
    }
    int64_t offset = 0;
    std::vector<int64_t> used;
    if (!exact.empty()) {
      offset = median_of(exact);
      used = std::move(exact);
    } else if (auto best = densest(votes, tol)) {
      offset = best->first;
      for (int64_t d : votes)
        if (std::llabs(d - offset) <= tol) used.push_back(d);
      // Ranks of one job end most of their blocking collectives together: when fewer than a
      // third of them agree on one offset, the ranks did not synchronise on these collectives.
      size_t agreeing = std::min(best->second, std::min(shared_ref, shared_k));
      if (agreeing * 3 < std::min(shared_ref, shared_k) && !options.same_clock) {
        out.residuals[k] = median_of([&] {
          std::vector<int64_t> r;
          for (int64_t d : used) r.push_back(std::llabs(d - offset));
          return r;
        }());
        out.note = fmt::format(
            "clock alignment refused: only {} of rank {}'s {} collectives end together with rank {}'s under any one clock "
            "offset (at least a third must): the ranks did not synchronise on them, or the traces are not of one run",
            agreeing, ranks[k].rank, shared_k, ranks[0].rank);
        return out;
      }
    } else if (options.same_clock) {
      notes.push_back(fmt::format("rank {} shares no collective with rank {}", ranks[k].rank, ranks[0].rank));
      continue;
    } else {
      out.note = fmt::format("clock alignment refused: rank {} shares no matched collective with rank {}", ranks[k].rank,
                             ranks[0].rank);
      return out;
    }
    if (options.same_clock) offset = 0;
    std::vector<int64_t> residual;
    for (int64_t d : used) residual.push_back(std::llabs(d - offset));
    int64_t r = median_of(residual);
    out.offsets[k] = offset;
    out.residuals[k] = r;
    if (r >= worst) {
      worst = r;
      worst_rank = k;
    }
    if (used.size() < 3)
      notes.push_back(fmt::format("rank {}'s offset rests on {} collective{}", ranks[k].rank, used.size(),
                                  used.size() == 1 ? "" : "s"));
  }
  out.residuals[0] = 0;
  bool any_residual = std::any_of(out.residuals.begin() + 1, out.residuals.end(), [](const auto& r) { return r.has_value(); });
  if (any_residual) out.residual_ns = worst;
  if (options.same_clock) {
    // One clock: nothing to refuse; a large residual says the collectives matched poorly.
    notes.insert(notes.begin(), "the ranks share one clock (processes of one nsys export)");
  } else if (worst > limit) {
    out.note = fmt::format(
        "clock alignment refused: after the best offset, rank {}'s collective ends still differ from rank {}'s by a median "
        "{} (limit {}): the traces may not be of the same run, or their collectives could not be matched",
        ranks[worst_rank].rank, ranks[0].rank, ms_text(worst), ms_text(limit));
    return out;
  }
  out.aligned = true;

  // 2. Instances: per (group, type), by recorded sequence number; else each rank's calls are
  // paired with the group's reference rank (its lowest rank with calls) by closest end in job
  // time, in order, within the limit. Calls left unpaired (outside the other's capture, or
  // dropped by a sampled trace) are no instance.
  using Parts = std::vector<std::pair<size_t, size_t>>;  // (input rank, call)
  std::vector<std::tuple<std::string, std::string, int64_t, Parts>> matched;
  auto job_end = [&](size_t k, size_t c) { return call(k, c).end_ns + out.offsets[k]; };
  for (const auto& [key, per_rank] : groups) {
    if (all_have_seq(ranks, per_rank)) {
      std::map<int64_t, Parts> by_seq;
      for (size_t k = 0; k < nranks; ++k)
        for (size_t c : per_rank[k]) {
          auto& parts = by_seq[*call(k, c).seq];
          if (parts.empty() || parts.back().first != k) parts.emplace_back(k, c);  // a repeated number keeps its first call
        }
      for (auto& [seq, parts] : by_seq) matched.emplace_back(key.first, key.second, seq, std::move(parts));
      continue;
    }
    size_t ref = nranks;
    for (size_t k = 0; k < nranks && ref == nranks; ++k)
      if (!per_rank[k].empty()) ref = k;
    const auto& a = per_rank[ref];
    std::vector<Parts> parts(a.size());
    for (size_t i = 0; i < a.size(); ++i) parts[i].emplace_back(ref, a[i]);
    for (size_t k = ref + 1; k < nranks; ++k) {
      const auto& b = per_rank[k];
      size_t i = 0, j = 0;
      while (i < a.size() && j < b.size()) {
        int64_t delta = job_end(k, b[j]) - job_end(ref, a[i]);
        bool ok = std::llabs(delta) <= limit && compatible(call(ref, a[i]), call(k, b[j]));
        if (ok) {
          // A closer partner next in line wins: the other call is then unmatched.
          if (j + 1 < b.size() && std::llabs(job_end(k, b[j + 1]) - job_end(ref, a[i])) < std::llabs(delta) &&
              compatible(call(ref, a[i]), call(k, b[j + 1]))) {
            ++j;
            continue;
          }
          if (i + 1 < a.size() && std::llabs(job_end(k, b[j]) - job_end(ref, a[i + 1])) < std::llabs(delta) &&
              compatible(call(ref, a[i + 1]), call(k, b[j]))) {
            ++i;
            continue;
          }
          parts[i].emplace_back(k, b[j]);
          ++i;
          ++j;
        } else if (delta < 0) {
          ++j;
        } else {
          ++i;
        }
      }
    }
    for (size_t i = 0; i < a.size(); ++i)
      matched.emplace_back(key.first, key.second, static_cast<int64_t>(i), std::move(parts[i]));
  }

  // 3. Instances in job time: arrival, last arriver, wait and transfer per participant.
  for (auto& [pg, type, seq, parts] : matched) {
    if (parts.size() < 2) continue;
    MatchedInstance inst;
    inst.process_group = pg;
    inst.type = type;
    inst.seq = seq;
    int64_t first = INT64_MAX, last = INT64_MIN;
    std::vector<int64_t> ends;
    std::optional<int64_t> bytes;
    bool mismatch = false;
    for (const auto& [k, c] : parts) {
      const RankCollective& rc = call(k, c);
      MatchedParticipation p;
      p.rank = ranks[k].rank;
      p.call = c;
      p.start_ns = rc.start_ns + out.offsets[k];
      p.end_ns = std::max(rc.end_ns, rc.start_ns) + out.offsets[k];
      if (p.start_ns < first) {
        first = p.start_ns;
        inst.first_rank = p.rank;
      }
      if (p.start_ns >= last) {  // a tie goes to the higher rank (first: to the lower)
        last = p.start_ns;
        inst.last_rank = p.rank;
      }
      ends.push_back(p.end_ns);
      if (rc.bytes) {
        if (bytes && *bytes != *rc.bytes && sizes_comparable(type)) mismatch = true;
        if (!bytes) bytes = rc.bytes;
      }
      inst.participants.push_back(p);
    }
    if (mismatch) ++out.size_mismatches;
    inst.bytes = bytes;
    inst.last_arrival_ns = last;
    inst.end_ns = median_of(ends);
    for (auto& p : inst.participants) {
      int64_t dur = p.end_ns - p.start_ns;
      p.wait_ns = std::clamp<int64_t>(last - p.start_ns, 0, dur);
      p.transfer_ns = dur - p.wait_ns;
    }
    std::sort(inst.participants.begin(), inst.participants.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    out.instances.push_back(std::move(inst));
  }
  std::sort(out.instances.begin(), out.instances.end(), [](const MatchedInstance& a, const MatchedInstance& b) {
    return std::tie(a.last_arrival_ns, a.process_group, a.type, a.seq) < std::tie(b.last_arrival_ns, b.process_group, b.type, b.seq);
  });
  if (out.size_mismatches > 0)
    notes.push_back(fmt::format("{} matched collective{} recorded different sizes on different ranks", out.size_mismatches,
                                out.size_mismatches == 1 ? "" : "s"));
  for (const auto& n : notes) out.note += (out.note.empty() ? "" : "; ") + n;
  return out;
}

namespace {

// ---- reading the models ----

// A trace as job grouping sees it; trace_id is the index of its model (the order traces are
// written, so the order of their ids in the store).
struct TraceRow {
  int64_t trace_id = 0;
  std::string format, clock;
  opt_i64 rank, world_size, start_ns;
  std::string backend;
};

// One rank candidate: a trace, or one process of a multi-process nsys export.
struct Unit {
  int64_t trace_id = 0;
  opt_i64 pid;  // nsys process
  opt_i64 rank;
};

struct Job {
  std::string source;
  opt_i64 world_size;
  std::vector<Unit> ranks;  // in rank order; Unit::rank set
};

struct HostRange {
  int64_t id = 0, pid = 0, tid = 0, start = 0, end = 0, name_id = 0;
  opt_i64 op_id, dims_id, types_id;
  std::optional<std::string> coll_name, pg, dtype;
  opt_i64 seq, nelems;
};

struct Call {
  int64_t pid = 0, tid = 0, start = 0, end = 0;
  bool annotated = false, has_args = false;
  std::string type = "unidentified", pg;
  opt_i64 seq, bytes, op_id;
  opt_i64 kernel_id, kernel_start, kernel_end;
};

opt_i64 opt_of(int64_t v) { return v == kNone ? opt_i64() : opt_i64(v); }

bool starts_with_ascii_nocase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i]))) return false;
  return true;
}

// The host range names a collective call is made of: PyTorch's record_param_comms, c10d:: ops and
// the backends' ranges. The backend and c10d prefixes match in any letter case (they were SQL LIKE
// patterns); which of them is a backend range (is_backend_range) is case-sensitive.
bool is_collective_range_name(std::string_view name) {
  if (name == "record_param_comms") return true;
  for (std::string_view p : {"nccl:", "gloo:", "c10d::", "mpi:", "ucc:", "xccl:", "rccl:"})
    if (starts_with_ascii_nocase(name, p)) return true;
  return false;
}

// The collectives of one derived trace model.
class JobReader {
 public:
  explicit JobReader(const TraceModel& m) : m_(m), d_(m.derived) {}

  const std::string& text(int64_t id) const { return m_.strings.text(id); }

  // Every collective call of the trace (of one process when pid is set), on the trace's clock.
  std::vector<RankCollective> collectives(opt_i64 pid) {
    std::vector<Call> calls = host_calls(pid);
    attach_kernels(pid, calls);
    const auto& iterations = load_iterations();
    std::vector<RankCollective> out;
    for (const Call& c : calls) {
      RankCollective r;
      r.op_id = c.op_id;
      r.kernel_id = c.kernel_id;
      r.process_group = c.pg;
      r.seq = c.seq;
      r.type = c.type;
      r.bytes = c.bytes;
      r.start_ns = c.kernel_start ? *c.kernel_start : c.start;
      r.end_ns = c.kernel_end ? *c.kernel_end : c.end;
      int64_t host = c.annotated || c.op_id || c.has_args ? c.start : r.start_ns;
      auto it = std::upper_bound(iterations.begin(), iterations.end(), host,
                                 [](int64_t t, const IterRow& i) { return t < i.start; });
      if (it != iterations.begin() && host < std::prev(it)->end) {
        r.iteration = std::prev(it)->ordinal;
        r.step_number = std::prev(it)->number;
      }
      out.push_back(std::move(r));
    }
    return out;
  }

  // Median iteration duration of the trace, when it has iterations.
  opt_i64 median_step() {
    const auto& its = load_iterations();
    if (its.empty()) return std::nullopt;
    std::vector<int64_t> d;
    for (const auto& i : its) d.push_back(i.end - i.start);
    return median_of(d);
  }

 private:
  struct IterRow {
    int64_t ordinal = 0, start = 0, end = 0;
    opt_i64 number;
  };

  // The iterations by start (ties in ordinal order).
  const std::vector<IterRow>& load_iterations() {
    if (iterations_) return *iterations_;
    std::vector<IterRow> rows;
    for (size_t k = 0; k < d_.iterations.size(); ++k) {
      const IterationFact& it = d_.iterations[k];
      rows.push_back({static_cast<int64_t>(k), it.start, it.end, it.number});
    }
    std::stable_sort(rows.begin(), rows.end(), [](const IterRow& a, const IterRow& b) { return a.start < b.start; });
    iterations_ = std::move(rows);
    return *iterations_;
  }

  // Per range: the op made of it (the first when there were several), -1 when none.
  const std::vector<int64_t>& op_of_range() {
    if (op_of_range_.size() == m_.ranges.size() + 1) return op_of_range_;
    op_of_range_.assign(m_.ranges.size() + 1, -1);  // one extra slot marks "built"
    for (size_t o = 0; o < d_.ops.size(); ++o) {
      int64_t r = d_.ops[o].range;
      if (r >= 0 && static_cast<size_t>(r) < m_.ranges.size() && op_of_range_[static_cast<size_t>(r)] < 0)
        op_of_range_[static_cast<size_t>(r)] = static_cast<int64_t>(o);
    }
    return op_of_range_;
  }

  std::vector<Call> host_calls(opt_i64 pid) {
    std::vector<HostRange> ranges;
    std::vector<int8_t> comm(static_cast<size_t>(m_.strings.size()) + 1, -1);  // per name id: a collective name?
    for (size_t i = 0; i < m_.ranges.size(); ++i) {
      const RangeFact& f = m_.ranges[i];
      if (f.name_id < 1 || f.name_id > m_.strings.size()) continue;
      int8_t& is = comm[static_cast<size_t>(f.name_id)];
      if (is < 0) is = is_collective_range_name(text(f.name_id)) ? 1 : 0;
      if (!is) continue;
      if (pid && f.pid != *pid) continue;
      HostRange r;
      r.id = static_cast<int64_t>(i);
      r.pid = f.pid == kNone ? 0 : f.pid;
      r.tid = f.tid == kNone ? 0 : f.tid;
      r.start = f.start_ns;
      r.end = r.start + std::max<int64_t>(0, f.dur_ns);
      r.name_id = f.name_id;
      const RangeArgs& args = m_.args_of(f);
      if (args.input_dims_id >= 1) r.dims_id = args.input_dims_id;
      if (args.input_types_id >= 1) r.types_id = args.input_types_id;
      if (f.collective >= 0) {
        const CollectiveArgs& a = m_.collectives[static_cast<size_t>(f.collective)];
        r.coll_name = a.collective_name;
        r.pg = a.process_group;
        r.seq = a.seq;
        r.nelems = a.in_nelems;
        r.dtype = a.dtype;
      }
      if (int64_t op = op_of_range()[i]; op >= 0) r.op_id = op;
      ranges.push_back(std::move(r));
    }
    if (ranges.empty()) return {};
    std::sort(ranges.begin(), ranges.end(), [](const HostRange& a, const HostRange& b) {
      return std::tie(a.pid, a.tid, a.start, b.end, a.id) < std::tie(b.pid, b.tid, b.start, a.end, b.id);
    });
    // Nested collective ranges on one thread (c10d::allreduce_ > record_param_comms > nccl:all_reduce)
    // are one call.
    std::vector<Call> calls;
    std::vector<std::vector<const HostRange*>> members;
    for (const HostRange& r : ranges) {
      bool nested = !calls.empty() && calls.back().pid == r.pid && calls.back().tid == r.tid && r.start >= calls.back().start &&
                    r.end <= calls.back().end;
      if (!nested) {
        Call c;
        c.pid = r.pid;
        c.tid = r.tid;
        c.start = r.start;
        c.end = r.end;
        calls.push_back(c);
        members.emplace_back();
      }
      members.back().push_back(&r);
    }
    for (size_t i = 0; i < calls.size(); ++i) describe(calls[i], members[i]);
    bool any_annotated = std::any_of(calls.begin(), calls.end(), [](const Call& c) { return c.annotated; });
    if (!any_annotated) return calls;
    // With backend ranges (nccl:*, gloo:*), those are the collectives; the other calls are the
    // framework side of the same operations (gloo runs them on a worker thread): their arguments
    // go to the next backend call of the same type that has none, in time order.
    std::sort(calls.begin(), calls.end(), [](const Call& a, const Call& b) { return a.start < b.start; });
    std::map<std::string, std::vector<const Call*>> pending;
    std::map<std::string, size_t> next;
    std::vector<Call> out;
    for (const Call& c : calls) {
      if (!c.annotated) {
        if (c.has_args) pending[c.type].push_back(&c);
        continue;
      }
      Call k = c;
      auto& queue = pending[k.type];
      size_t& n = next[k.type];
      if (!k.has_args && n < queue.size()) {
        const Call& donor = *queue[n++];
        k.pg = donor.pg;
        k.seq = donor.seq;
        if (!k.bytes) k.bytes = donor.bytes;
        if (!k.op_id) k.op_id = donor.op_id;
      }
      out.push_back(std::move(k));
    }
    return out;
  }

  void describe(Call& c, const std::vector<const HostRange*>& members) {
    std::string c10d_type, backend_type;
    for (const HostRange* r : members) {
      const std::string& name = text(r->name_id);
      if (is_backend_range(name)) {
        c.annotated = true;
        if (backend_type.empty()) backend_type = collective_type(name);
        if (!c.bytes && r->dims_id && r->types_id) {
          auto n = first_dims_elements(text(*r->dims_id));
          auto size = dtype_bytes(first_type(text(*r->types_id)));
          if (n && size && *n <= INT64_MAX / *size) c.bytes = *n * *size;
        }
      } else if (name.starts_with("c10d::") && c10d_type.empty()) {
        c10d_type = collective_type(name);
      }
      if (!c.op_id && r->op_id) c.op_id = r->op_id;
      if (r->coll_name || r->pg || r->seq || r->nelems) {
        c.has_args = true;
        if (r->pg && c.pg.empty()) c.pg = *r->pg;
        if (r->seq && !c.seq) c.seq = r->seq;
        if (r->coll_name && collective_type(*r->coll_name) != "unidentified") c.type = collective_type(*r->coll_name);
        if (r->nelems && r->dtype) {
          auto size = dtype_bytes(*r->dtype);
          if (size && *r->nelems <= INT64_MAX / *size) c.bytes = *r->nelems * *size;
        }
      }
    }
    if (c.type == "unidentified") c.type = !c10d_type.empty() && c10d_type != "unidentified" ? c10d_type : backend_type;
    if (c.type.empty()) c.type = "unidentified";
  }

  // Communication kernels join the call whose host range encloses their launch; kernels no call
  // encloses stand for their own collective when the trace has no host collective ranges.
  void attach_kernels(opt_i64 pid, std::vector<Call>& calls) {
    std::vector<size_t> kernels;  // communication kernels in (start, position) order
    if (d_.kernels.size() == m_.kernels.size())
      for (size_t i = 0; i < m_.kernels.size(); ++i)
        if (d_.kernels[i].category_text() == "communication" && (!pid || m_.kernels[i].pid == *pid)) kernels.push_back(i);
    std::stable_sort(kernels.begin(), kernels.end(),
                     [&](size_t a, size_t b) { return m_.kernels[a].start_ns < m_.kernels[b].start_ns; });
    std::map<std::pair<int64_t, int64_t>, std::vector<size_t>> by_thread;
    for (size_t i = 0; i < calls.size(); ++i) by_thread[{calls[i].pid, calls[i].tid}].push_back(i);
    for (auto& [thread, list] : by_thread)
      std::sort(list.begin(), list.end(), [&](size_t a, size_t b) { return calls[a].start < calls[b].start; });
    bool host_calls = !calls.empty();
    std::vector<size_t> kernel_only;
    for (size_t i : kernels) {
      const KernelFact& kf = m_.kernels[i];
      int64_t id = static_cast<int64_t>(i), start = kf.start_ns;
      int64_t end = start + std::max<int64_t>(0, kf.dur_ns);
      Call* owner = nullptr;
      int64_t api = d_.kernels[i].api;
      if (api >= 0 && static_cast<size_t>(api) < m_.apis.size() && m_.apis[static_cast<size_t>(api)].pid != kNone &&
          m_.apis[static_cast<size_t>(api)].tid != kNone) {
        const ApiFact& a = m_.apis[static_cast<size_t>(api)];
        auto it = by_thread.find({a.pid, a.tid});
        int64_t launch = a.start_ns;
        if (it != by_thread.end()) {
          auto& list = it->second;
          auto pos = std::upper_bound(list.begin(), list.end(), launch,
                                      [&](int64_t t, size_t c) { return t < calls[c].start; });
          if (pos != list.begin() && launch <= calls[*std::prev(pos)].end) owner = &calls[*std::prev(pos)];
        }
      }
      if (owner) {
        if (!owner->kernel_id) owner->kernel_id = id;
        owner->kernel_start = std::min(owner->kernel_start.value_or(start), start);
        owner->kernel_end = std::max(owner->kernel_end.value_or(end), end);
        continue;
      }
      if (host_calls) continue;
      kernel_only.push_back(i);
    }
    for (size_t i : kernel_only) {
      const KernelFact& kf = m_.kernels[i];
      Call c;
      c.start = kf.start_ns;
      c.end = kf.start_ns + std::max<int64_t>(0, kf.dur_ns);
      c.kernel_id = static_cast<int64_t>(i);
      c.kernel_start = c.start;
      c.kernel_end = c.end;
      c.type = collective_type(text(kf.name_id));
      calls.push_back(c);
    }
  }

  const TraceModel& m_;
  const DerivedFacts& d_;
  std::optional<std::vector<IterRow>> iterations_;
  std::vector<int64_t> op_of_range_;
};

std::vector<TraceRow> load_traces(const std::vector<const TraceModel*>& models) {
  std::vector<TraceRow> out;
  for (size_t i = 0; i < models.size(); ++i) {
    const TraceModel& m = *models[i];
    TraceRow t;
    t.trace_id = static_cast<int64_t>(i);
    t.format = m.info.format;
    t.clock = m.info.clock;
    t.rank = m.info.rank;
    t.world_size = m.info.world_size;
    t.backend = m.info.comm_backend.value_or("");
    t.start_ns = opt_of(m.start_ns);
    out.push_back(std::move(t));
  }
  return out;
}

// Processes of an nsys export that ran GPU work, in pid order.
std::vector<int64_t> gpu_processes(const TraceModel& m) {
  std::set<int64_t> pids;
  for (const auto& k : m.kernels)
    if (k.pid != kNone) pids.insert(k.pid);
  return {pids.begin(), pids.end()};
}

// Two captures of one job start within this of each other (epoch clocks): further apart, the
// same world size and backend are a coincidence of two runs.
constexpr int64_t kSameRunWindowNs = int64_t{10} * 60 * 1'000'000'000;

std::vector<Job> group_jobs(const std::vector<const TraceModel*>& models, const std::vector<TraceRow>& traces,
                            const std::string& job_by) {
  std::vector<Job> jobs;
  std::vector<const TraceRow*> kineto_like;
  std::vector<Unit> all_units;
  std::vector<Job> nsys_jobs;
  std::map<int64_t, int64_t> lone_process;  // nsys export of one rank -> its GPU process
  for (const auto& t : traces) {
    std::vector<int64_t> pids =
        t.format == "nsys" ? gpu_processes(*models[static_cast<size_t>(t.trace_id)]) : std::vector<int64_t>{};
    // One export per rank (`srun nsys profile …`): its one GPU process is a rank, named by the
    // launcher's variables in its environment; it joins the other exports of the job as Kineto
    // ranks do (rank, world size, clock), below.
    if (pids.size() == 1 && t.rank && t.world_size && *t.world_size > 1) {
      lone_process[t.trace_id] = pids[0];
      all_units.push_back({t.trace_id, pids[0], t.rank});
      kineto_like.push_back(&t);
      continue;
    }
    if (pids.size() >= 2) {
      Job j;
      j.source = "nsys_processes";
      j.world_size = t.world_size;
      for (size_t i = 0; i < pids.size(); ++i) j.ranks.push_back({t.trace_id, pids[i], static_cast<int64_t>(i)});
      for (const auto& u : j.ranks) all_units.push_back(u);
      nsys_jobs.push_back(std::move(j));
      continue;
    }
    all_units.push_back({t.trace_id, std::nullopt, t.rank});
    kineto_like.push_back(&t);
  }
  if (job_by == "given") {
    Job j;
    j.source = "given_together";
    std::set<int64_t> seen;
    bool distinct = true;
    for (const auto& u : all_units)
      distinct = distinct && u.rank && seen.insert(*u.rank).second && (!u.pid || lone_process.count(u.trace_id));
    for (size_t i = 0; i < all_units.size(); ++i) {
      Unit u = all_units[i];
      if (!distinct) u.rank = static_cast<int64_t>(i);
      j.ranks.push_back(u);
    }
    for (const auto& t : traces) j.world_size = j.world_size ? j.world_size : t.world_size;
    std::sort(j.ranks.begin(), j.ranks.end(), [](const Unit& a, const Unit& b) { return *a.rank < *b.rank; });
    if (j.ranks.size() == 1) j.source = "single";
    if (!j.ranks.empty()) jobs.push_back(std::move(j));
    return jobs;
  }
  for (auto& j : nsys_jobs) jobs.push_back(std::move(j));
  for (const TraceRow* t : kineto_like) {
    bool joinable = job_by == "auto" && t->rank && t->world_size && *t->world_size > 1;
    Job* target = nullptr;
    if (joinable) {
      for (auto& j : jobs) {
        if (j.source != "distributed_info" || j.world_size != t->world_size) continue;
        const TraceRow* first = nullptr;
        for (const auto& tr : traces)
          if (tr.trace_id == j.ranks.front().trace_id) first = &tr;
        if (!first || first->backend != t->backend || first->clock != t->clock) continue;
        if (t->clock == "epoch" && first->start_ns && t->start_ns && std::llabs(*first->start_ns - *t->start_ns) > kSameRunWindowNs)
          continue;
        if (std::any_of(j.ranks.begin(), j.ranks.end(), [&](const Unit& u) { return u.rank == t->rank; })) continue;
        target = &j;
        break;
      }
    }
    if (!target) {
      Job j;
      j.source = joinable ? "distributed_info" : "single";
      j.world_size = t->world_size;
      jobs.push_back(std::move(j));
      target = &jobs.back();
    }
    auto lone = lone_process.find(t->trace_id);
    target->ranks.push_back({t->trace_id, lone == lone_process.end() ? opt_i64() : opt_i64(lone->second), t->rank.value_or(0)});
  }
  for (auto& j : jobs) {
    std::sort(j.ranks.begin(), j.ranks.end(), [](const Unit& a, const Unit& b) { return *a.rank < *b.rank; });
    if (j.ranks.size() == 1 && j.source == "distributed_info") j.source = "single";
    if (j.source == "distributed_info" &&
        std::all_of(j.ranks.begin(), j.ranks.end(), [&](const Unit& u) { return lone_process.count(u.trace_id) > 0; }))
      j.source = "nsys_environment";
  }
  // Jobs in the order of their first trace.
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) {
    auto first = [](const Job& j) {
      int64_t m = INT64_MAX;
      for (const auto& u : j.ranks) m = std::min(m, u.trace_id);
      return m;
    };
    return first(a) < first(b);
  });
  return jobs;
}

// The device a rank drives: the one its kernels ran longest on (ties: the lower id).
opt_i64 rank_device(const TraceModel& m, opt_i64 pid) {
  std::map<int64_t, int64_t> busy;  // device -> summed kernel time
  for (const auto& k : m.kernels)
    if (k.device_id != kNone && (!pid || k.pid == *pid)) busy[k.device_id] += k.dur_ns;
  opt_i64 best;
  int64_t most = 0;
  for (const auto& [device, ns] : busy)
    if (!best || ns > most) best = device, most = ns;
  return best;
}

}  // namespace

JobFacts derive_jobs(const std::vector<const TraceModel*>& models, const DeriveOptions& options) {
  if (options.job_by != "auto" && options.job_by != "given" && options.job_by != "none")
    throw Error("--job-by must be auto, given or none, got '" + options.job_by + "'");
  auto traces = load_traces(models);
  auto jobs = group_jobs(models, traces, options.job_by);
  std::vector<JobReader> readers;
  readers.reserve(models.size());
  for (const TraceModel* m : models) readers.emplace_back(*m);

  JobFacts out;
  for (const Job& job : jobs) {
    std::vector<RankCollectives> ranks;
    AlignmentResult result;
    result.offsets.assign(job.ranks.size(), 0);
    result.residuals.assign(job.ranks.size(), std::nullopt);
    if (job.ranks.size() >= 2) {
      std::vector<int64_t> steps;
      for (const auto& u : job.ranks) {
        RankCollectives rc;
        rc.rank = *u.rank;
        rc.trace_id = u.trace_id;
        JobReader& reader = readers[static_cast<size_t>(u.trace_id)];
        rc.calls = reader.collectives(u.pid);
        ranks.push_back(std::move(rc));
        if (auto s = reader.median_step()) steps.push_back(*s);
      }
      AlignOptions ao;
      ao.same_clock = job.source == "nsys_processes";
      if (!steps.empty()) ao.median_step_ns = median_of(steps);
      result = match_and_align(ranks, ao);
    }
    JobFact& j = out.jobs.emplace_back();
    j.source = job.source;
    j.world_size = or_none(job.world_size);
    j.ranks_present = static_cast<int64_t>(job.ranks.size());
    j.aligned = result.aligned;
    j.residual_ns = result.aligned ? or_none(result.residual_ns) : kNone;
    if (job.ranks.size() >= 2 && !result.note.empty()) j.alignment_note = result.note;
    for (size_t k = 0; k < job.ranks.size(); ++k) {
      const Unit& u = job.ranks[k];
      JobRankFact r;
      r.rank = *u.rank;
      r.trace = static_cast<size_t>(u.trace_id);
      r.pid = or_none(u.pid);
      r.device_id = or_none(rank_device(*models[r.trace], u.pid));
      r.clock_offset_ns = result.aligned ? result.offsets[k] : 0;
      r.offset_residual_ns = result.aligned ? or_none(result.residuals[k]) : kNone;
      j.ranks.push_back(r);
    }
    std::unordered_map<int64_t, size_t> index_of_rank;
    for (size_t k = 0; k < ranks.size(); ++k) index_of_rank[ranks[k].rank] = k;
    for (size_t i = 0; i < result.instances.size(); ++i) {
      const MatchedInstance& inst = result.instances[i];
      CollectiveInstanceFact f;
      f.process_group = inst.process_group;
      f.seq = inst.seq;
      f.type = inst.type;
      f.bytes = or_none(inst.bytes);
      f.ranks = static_cast<int64_t>(inst.participants.size());
      f.first_rank = inst.first_rank;
      f.last_rank = inst.last_rank;
      f.last_arrival_ns = inst.last_arrival_ns;
      f.end_ns = inst.end_ns;
      j.instances.push_back(std::move(f));
      for (const auto& p : inst.participants) {
        const RankCollectives& rc = ranks[index_of_rank[p.rank]];
        const RankCollective& call = rc.calls[p.call];
        ParticipationFact pf;
        pf.instance = static_cast<int64_t>(i);
        pf.rank = p.rank;
        pf.trace = static_cast<size_t>(rc.trace_id);
        pf.op = call.op_id.value_or(-1);
        pf.kernel = call.kernel_id.value_or(-1);
        pf.start_ns = p.start_ns;
        pf.end_ns = p.end_ns;
        pf.wait_ns = p.wait_ns;
        pf.transfer_ns = p.transfer_ns;
        pf.iteration = or_none(call.iteration);
        j.participations.push_back(pf);
      }
    }
  }
  return out;
}

}  // namespace proflint
