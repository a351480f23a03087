// engine/derive/correlation.cpp — linking GPU work, API calls and ops with sorted sweeps.
#include "engine/derive/correlation.hpp"

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/derive/ops.hpp"

namespace proflint {

namespace {

struct CorrKey {
  int64_t correlation_id;
  int64_t pid;
  int64_t start;
  int64_t api;  // index
};

// Among several candidate calls, the latest one starting at or before `t` (the launch precedes
// its work); nested duplicate rows (nsys 2022 'cudaMalloc' around 'cudaMalloc_v3020') resolve to
// the inner, later-starting one.
int64_t latest_before(const std::vector<CorrKey>& keys, size_t lo, size_t hi, int64_t t, int64_t pid) {
  int64_t best = -1, best_start = INT64_MIN, fallback = -1;
  for (size_t i = lo; i < hi; ++i) {
    if (pid != kNone && keys[i].pid != pid) continue;
    if (fallback < 0) fallback = keys[i].api;
    if (keys[i].start <= t && keys[i].start >= best_start) {
      best = keys[i].api;
      best_start = keys[i].start;
    }
  }
  return best >= 0 ? best : fallback;
}

// Ops by their range's Kineto External id; the first op of an id wins. A sorted list rather than
// a hash map: the map's 470k nodes (x20 tiled trace) were small heap blocks that stayed resident
// after it was freed, through derivation's peak; one list is one block, given back whole.
class OpsByExternalId {
 public:
  explicit OpsByExternalId(const TraceData& t) {
    entries_.reserve(t.ops.size());
    for (size_t i = 0; i < t.ops.size(); ++i) {
      const auto& op = t.ops[i];
      if (op.range < 0) continue;
      int64_t ext = t.args(t.ranges[static_cast<size_t>(op.range)]).external_id;
      if (ext != kNone) entries_.push_back({ext, static_cast<int64_t>(i)});
    }
    std::sort(entries_.begin(), entries_.end());
  }
  // The op with External id `ext`, or -1.
  int64_t find(int64_t ext) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), std::pair<int64_t, int64_t>{ext, INT64_MIN});
    return it != entries_.end() && it->first == ext ? it->second : -1;
  }

 private:
  std::vector<std::pair<int64_t, int64_t>> entries_;  // (external id, op), sorted
};

}  // namespace

void correlate_gpu_to_api(TraceData& t) {
  std::vector<CorrKey> keys;
  keys.reserve(t.apis.size());
  for (size_t i = 0; i < t.apis.size(); ++i) {
    const auto& a = t.apis[i];
    if (int64_t c = t.correlation_id(a); c != kNone) keys.push_back({c, a.pid, a.start, static_cast<int64_t>(i)});
  }
  std::sort(keys.begin(), keys.end(), [](const CorrKey& a, const CorrKey& b) {
    if (a.correlation_id != b.correlation_id) return a.correlation_id < b.correlation_id;
    if (a.pid != b.pid) return a.pid < b.pid;
    return a.start < b.start;
  });
  for (auto& g : t.gpu) {
    g.api = -1;
    const int64_t correlation = t.correlation_id(g);
    if (correlation == kNone) continue;
    auto lo = std::lower_bound(keys.begin(), keys.end(), correlation,
                               [](const CorrKey& k, int64_t c) { return k.correlation_id < c; });
    auto hi = std::upper_bound(lo, keys.end(), correlation,
                               [](int64_t c, const CorrKey& k) { return c < k.correlation_id; });
    if (lo == hi) continue;
    size_t l = static_cast<size_t>(lo - keys.begin()), h = static_cast<size_t>(hi - keys.begin());
    int64_t api = -1;
    // Correlation ids are per process: when the GPU row names its process (nsys), never match a
    // call of another process, even if the id is unique (its real launch may predate the capture).
    if (g.pid != kNone) api = latest_before(keys, l, h, g.start, g.pid);
    else api = h - l == 1 ? keys[l].api : latest_before(keys, l, h, g.start, kNone);
    g.api = api;
    if (api >= 0) t.apis[static_cast<size_t>(api)].launches = true;
  }
}

size_t first_host_range(const std::vector<RangeRec>& ranges, int64_t pid, int64_t tid) {
  return static_cast<size_t>(std::lower_bound(ranges.begin(), ranges.end(), std::pair{pid, tid},
                                              [](const RangeRec& r, const std::pair<int64_t, int64_t>& key) {
                                                if (r.kind == RangeKind::gpu_user_annotation) return false;
                                                if (r.pid != key.first) return r.pid < key.first;
                                                return r.tid < key.second;
                                              }) -
                             ranges.begin());
}

void attribute_api_to_ops(TraceData& t) {
  // Ranges are sorted by (side, pid, tid, start); API calls by (pid, tid, start). Walk both per thread.
  const auto& ranges = t.ranges;
  size_t ri = 0;
  std::vector<size_t> stack;  // op ranges open at the current time, outermost first
  int64_t cur_pid = kNone, cur_tid = kNone;
  bool first = true;
  const OpsByExternalId ext_map(t);
  for (auto& a : t.apis) {
    if (first || a.pid != cur_pid || a.tid != cur_tid) {
      first = false;
      cur_pid = a.pid;
      cur_tid = a.tid;
      stack.clear();
      // Jump to this thread's host ranges (host ranges sort before GPU-side annotations).
      ri = first_host_range(ranges, cur_pid, cur_tid);
    }
    for (; ri < ranges.size() && ranges[ri].kind != RangeKind::gpu_user_annotation && ranges[ri].pid == cur_pid &&
           ranges[ri].tid == cur_tid && ranges[ri].start <= a.start;
         ++ri) {
      if (ranges[ri].op < 0) continue;
      while (!stack.empty() && ranges[stack.back()].end <= ranges[ri].start) stack.pop_back();
      stack.push_back(ri);
    }
    while (!stack.empty() && ranges[stack.back()].end <= a.start) stack.pop_back();
    a.op = -1;
    // The innermost open op; a partially overlapping top that already ended is skipped above.
    for (size_t k = stack.size(); k-- > 0;) {
      if (ranges[stack[k]].end > a.start) {
        a.op = ranges[stack[k]].op;
        break;
      }
    }
    if (int64_t ext = t.external_id(a); a.op < 0 && ext != kNone) a.op = ext_map.find(ext);
  }
}

void attribute_gpu_to_ops(TraceData& t) {
  const OpsByExternalId ext_map(t);
  std::unordered_map<std::string, int64_t> unassociated;
  int32_t unassociated_type = -1;  // its position in t.op_types once one is made
  auto unassociated_op = [&](const std::string& what, int64_t start, int64_t end) {
    std::string name = "unassociated:" + what;
    auto [it, inserted] = unassociated.emplace(name, static_cast<int64_t>(t.ops.size()));
    if (inserted) {
      OpRec op;
      op.name_id = static_cast<int32_t>(t.intern(name));
      if (unassociated_type < 0) unassociated_type = t.add_op_type("unassociated");
      op.op_type = unassociated_type;
      op.pass = OpPass::other;
      op.path_node = t.op_paths.add_verbatim(name);  // "/" + name
      t.unassociated_spans[it->second] = {kNone, kNone, start, end - start};
      t.ops.push_back(std::move(op));
    } else {
      OpSpan& span = t.unassociated_spans[it->second];
      int64_t op_end = std::max(span.start + span.dur, end);
      span.start = std::min(span.start, start);
      span.dur = op_end - span.start;
    }
    return it->second;
  };
  for (auto& g : t.gpu) {
    g.op = -1;
    if (g.api >= 0) g.op = t.apis[static_cast<size_t>(g.api)].op;
    if (int64_t ext = g.op < 0 ? t.external_id(g) : kNone; ext != kNone) g.op = ext_map.find(ext);
    if (g.op >= 0) continue;
    if (g.api >= 0) {
      auto& a = t.apis[static_cast<size_t>(g.api)];
      g.op = unassociated_op(t.text(a.name_id), a.start, a.end);
      a.op = g.op;
    } else {
      std::string what = g.kind == GpuKind::memcpy ? "memcpy" : g.kind == GpuKind::memset ? "memset" : std::string(g.category_text());
      g.op = unassociated_op(what, g.start, g.end);
    }
  }
}

}  // namespace proflint
