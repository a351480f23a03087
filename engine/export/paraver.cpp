// engine/export/paraver.cpp — see paraver.hpp. What is mapped how: docs/export.md.
#include "engine/export/paraver.hpp"

#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "engine/common/format.hpp"
#include "engine/common/utf8.hpp"
#include "engine/export/ranks.hpp"

namespace proflint::exporter {

namespace {

enum State : int64_t { kIdle = 0, kKernel = 1, kCopy = 2, kMemset = 3, kRuntime = 4, kSync = 5 };

std::optional<int64_t> opt(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getInt64();
}

// One line of the .prv body, kept small: a trace of millions of events is sorted in memory.
struct Record {
  enum Kind : uint8_t { event = 0, state = 1, comm = 2 };
  int64_t time = 0;
  int64_t end = 0;       // state: end; comm: receive time
  int64_t v1 = 0, v2 = 0;
  int64_t type1 = 0, type2 = 0;  // event types (type2 0 = none); comm: tag in type1, size in v1
  int32_t task = 0, thread = 0, task2 = 0, thread2 = 0;
  int32_t order = 0;     // at equal times: ends (deepest first), states, begins (outermost first), comms
  Kind kind = event;
};

// Value tables of the .pcf: names in first-seen order (the store is read in id order, so the
// numbering is the same on every run).
class ValueTable {
 public:
  int64_t value(const std::string& name) {
    auto [it, added] = values_.emplace(name, static_cast<int64_t>(names_.size()) + 1);
    if (added) names_.push_back(name);
    return it->second;
  }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::unordered_map<std::string, int64_t> values_;
  std::vector<std::string> names_;
};

// A .pcf/.row line holds one name: line breaks and other control characters become spaces.
std::string one_line(const std::string& s) {
  std::string out = sanitize_utf8(s);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return out;
}

struct Task {
  RankView view;
  std::map<std::pair<int64_t, int64_t>, int32_t> host;  // (pid, tid) -> thread (1-based)
  std::map<std::pair<int64_t, int64_t>, int32_t> gpu;   // (device, stream or -1) -> thread
  std::vector<std::string> row_names;
};

// A range before nesting: begin and end events are made per (task, thread, type).
struct Span {
  int64_t start, end, value, id;
};

class ParaverExporter {
 public:
  ParaverExporter(Store& store, const std::vector<Finding>& findings) : store_(store), findings_(findings) {}

  ParaverExportStats run(std::ostream& prv, std::ostream& pcf, std::ostream& row) {
    for (auto& v : rank_views(store_)) {
      Task t;
      t.view = std::move(v);
      tasks_.push_back(std::move(t));
      collect_threads(tasks_.back());
    }
    for (size_t i = 0; i < tasks_.size(); ++i) {
      int32_t task = static_cast<int32_t>(i) + 1;
      api_calls(tasks_[i], task);
      gpu_work(tasks_[i], task, "kernel");
      gpu_work(tasks_[i], task, "memcpy");
      gpu_work(tasks_[i], task, "memset");
      syncs(tasks_[i], task);
      ranges(tasks_[i], task);
      iterations(tasks_[i], task);
    }
    finding_events();
    nest_spans();
    clip_states();
    int64_t t0 = INT64_MAX, t_end = 0;
    for (const auto& r : records_) {
      t0 = std::min(t0, r.time);
      t_end = std::max({t_end, r.time, r.end});
    }
    if (records_.empty()) t0 = 0;
    std::stable_sort(records_.begin(), records_.end(), [](const Record& a, const Record& b) {
      if (a.time != b.time) return a.time < b.time;
      return a.order < b.order;
    });
    write_prv(prv, t0, records_.empty() ? 0 : t_end - t0);
    write_pcf(pcf);
    write_row(row);
    ParaverExportStats stats;
    stats.records = static_cast<int64_t>(records_.size());
    stats.tasks = static_cast<int64_t>(tasks_.size());
    for (const auto& t : tasks_) stats.threads += static_cast<int64_t>(t.row_names.size());
    return stats;
  }

 private:
  int64_t job_ns(const Task& t, int64_t ns) const { return ns + t.view.clock_offset_ns; }

  void collect_threads(Task& t) {
    const RankView& v = t.view;
    auto host = host_threads(store_, v);
    auto names = thread_names(store_, v);
    std::set<int64_t> pids;
    for (const auto& k : host) pids.insert(k.first);
    std::string prefix = "R" + std::to_string(v.rank) + " ";
    for (const auto& key : host) {
      t.host[key] = static_cast<int32_t>(t.row_names.size()) + 1;
      std::string name = prefix + (pids.size() > 1 ? "pid " + std::to_string(key.first) + " " : "") + "thread " +
                         std::to_string(key.second);
      // Kineto names threads "thread 123 (python3)" already; a recorded name is shown as it is.
      if (auto it = names.find(key); it != names.end())
        name = prefix + (pids.size() > 1 ? "pid " + std::to_string(key.first) + " " : std::string()) + it->second;
      t.row_names.push_back(one_line(name));
    }
    auto gpu = gpu_tracks(store_, v);
    for (const auto& key : gpu) {
      t.gpu[key] = static_cast<int32_t>(t.row_names.size()) + 1;
      t.row_names.push_back(prefix + "GPU " + std::to_string(key.first) +
                            (key.second < 0 ? " (no stream)" : " stream " + std::to_string(key.second)));
    }
  }

  void state(int32_t task, int32_t thread, int64_t start, int64_t end, int64_t value) {
    Record r;
    r.kind = Record::state;
    r.time = start;
    r.end = end;
    r.v1 = value;
    r.task = task;
    r.thread = thread;
    r.order = 1'500'000;
    records_.push_back(r);
  }

  // A named interval that does not nest (one GPU activity, one call): begin and end events.
  void interval_events(int32_t task, int32_t thread, int64_t start, int64_t end, int64_t type1, int64_t v1,
                       int64_t type2, int64_t v2) {
    Record b;
    b.time = start;
    b.task = task;
    b.thread = thread;
    b.type1 = type1;
    b.v1 = v1;
    b.type2 = type2;
    b.v2 = v2;
    b.order = 2'000'000;
    records_.push_back(b);
    Record e = b;
    e.time = end;
    e.v1 = 0;
    e.v2 = 0;
    e.order = 1'000'000;
    records_.push_back(e);
  }

  void comm(int32_t task, int32_t from, int64_t send, int32_t to, int64_t recv, int64_t size, int64_t tag) {
    Record r;
    r.kind = Record::comm;
    r.time = send;
    r.end = recv;
    r.task = task;
    r.thread = from;
    r.task2 = task;
    r.thread2 = to;
    r.v1 = size;
    r.type1 = tag;
    r.order = 3'000'000;
    records_.push_back(r);
  }

  void api_calls(Task& t, int32_t task) {
    SQLite::Statement q(store_.db(), "SELECT a.pid, a.tid, a.start_ns, a.dur_ns, s.value FROM _api_call a JOIN string s ON s.id = a.name_id WHERE " +
                                         host_filter(t.view, "a") + " ORDER BY a.id");
    while (q.executeStep()) {
      auto pid = opt(q.getColumn(0)), tid = opt(q.getColumn(1));
      if (!pid || !tid) continue;
      auto it = t.host.find({*pid, *tid});
      if (it == t.host.end()) continue;
      int64_t start = job_ns(t, q.getColumn(2).getInt64()), end = start + q.getColumn(3).getInt64();
      state(task, it->second, start, end, kRuntime);
      interval_events(task, it->second, start, end, kPrvApiCall, api_names_.value(q.getColumn(4).getString()), 0, 0);
    }
  }

  void gpu_work(Task& t, int32_t task, const std::string& what) {
    std::string name_col = what == "kernel" ? "s.value" : what == "memcpy" ? "a.kind" : "COALESCE(a.mem_kind, '')";
    std::string sql = "SELECT a.device_id, a.stream_id, a.start_ns, a.dur_ns, a.correlation_id, " +
                      std::string(what == "kernel" ? "NULL" : "a.bytes") + ", " + name_col +
                      ", api.pid, api.tid, api.start_ns FROM _" + what + " a " +
                      (what == "kernel" ? "JOIN string s ON s.id = a.name_id " : "") +
                      "LEFT JOIN _api_call api ON api.id = a.api_call_id WHERE " + gpu_filter(t.view, "a") + " ORDER BY a.id";
    SQLite::Statement q(store_.db(), sql);
    while (q.executeStep()) {
      auto it = t.gpu.find({opt(q.getColumn(0)).value_or(-1), opt(q.getColumn(1)).value_or(-1)});
      if (it == t.gpu.end()) continue;
      int64_t start = job_ns(t, q.getColumn(2).getInt64()), end = start + q.getColumn(3).getInt64();
      std::string name = q.getColumn(6).getString();
      if (what == "memcpy") {
        // 'htod' -> 'HtoD', as Kineto and Nsight name copies
        if (name.size() == 4 && name.compare(1, 2, "to") == 0) {
          name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
          name[3] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[3])));
        }
        name = "Memcpy " + name;
      }
      else if (what == "memset") name = name.empty() ? "Memset" : "Memset " + name;
      int64_t value = gpu_names_.value(name);
      if (what == "kernel") {
        state(task, it->second, start, end, kKernel);
        auto corr = opt(q.getColumn(4));
        interval_events(task, it->second, start, end, kPrvGpuActivity, value, corr ? kPrvCorrelation : 0, corr.value_or(0));
      } else {
        state(task, it->second, start, end, what == "memcpy" ? kCopy : kMemset);
        auto bytes = opt(q.getColumn(5));
        interval_events(task, it->second, start, end, kPrvGpuActivity, value, bytes ? kPrvCopySize : 0, bytes.value_or(0));
      }
      auto api_pid = opt(q.getColumn(7)), api_tid = opt(q.getColumn(8)), api_start = opt(q.getColumn(9));
      if (!api_pid || !api_tid || !api_start) continue;
      auto host = t.host.find({*api_pid, *api_tid});
      if (host == t.host.end()) continue;
      comm(task, host->second, job_ns(t, *api_start), it->second, start,
           what == "kernel" ? 0 : opt(q.getColumn(5)).value_or(0), what == "kernel" ? kPrvTagLaunch : kPrvTagMemory);
    }
  }

  void syncs(Task& t, int32_t task) {
    SQLite::Statement q(store_.db(), "SELECT a.device_id, a.stream_id, a.start_ns, a.dur_ns FROM sync_event a WHERE " +
                                         gpu_filter(t.view, "a") + " ORDER BY a.id");
    while (q.executeStep()) {
      auto it = t.gpu.find({opt(q.getColumn(0)).value_or(-1), opt(q.getColumn(1)).value_or(-1)});
      if (it == t.gpu.end()) continue;
      int64_t start = job_ns(t, q.getColumn(2).getInt64());
      state(task, it->second, start, start + q.getColumn(3).getInt64(), kSync);
    }
  }

  void ranges(Task& t, int32_t task) {
    SQLite::Statement q(store_.db(),
                        "SELECT a.id, a.pid, a.tid, a.start_ns, a.dur_ns, s.value, a.kind, a.device_id FROM _range a "
                        "JOIN string s ON s.id = a.name_id WHERE (" +
                            host_filter(t.view, "a") + ") OR (" + gpu_filter(t.view, "a") +
                            " AND a.pid IS NULL AND a.device_id IS NOT NULL) ORDER BY a.id");
    while (q.executeStep()) {
      auto pid = opt(q.getColumn(1)), tid = opt(q.getColumn(2)), device = opt(q.getColumn(7));
      std::string kind = q.getColumn(6).getString();
      int32_t thread = 0;
      if (!pid && device) {
        auto it = t.gpu.find({*device, tid.value_or(-1)});
        if (it == t.gpu.end()) continue;
        thread = it->second;
      } else {
        if (!pid || !tid) continue;
        auto it = t.host.find({*pid, *tid});
        if (it == t.host.end()) continue;
        thread = it->second;
      }
      int64_t type = kind == "cpu_op" ? kPrvFrameworkOp
                     : kind == "user_annotation" ? kPrvAnnotation
                     : kind == "python_function" ? kPrvPython
                     : kind == "gpu_user_annotation" ? kPrvGpuAnnotation
                     : kind == "nvtx" ? kPrvNvtx
                                      : kPrvOtherRange;
      int64_t start = job_ns(t, q.getColumn(3).getInt64());
      int64_t value = range_names_[type].value(q.getColumn(5).getString());
      spans_[{task, thread, type}].push_back(Span{start, start + q.getColumn(4).getInt64(), value, q.getColumn(0).getInt64()});
    }
  }

  // Iterations as events on the task's first row (host thread 1, or its first stream).
  void iterations(Task& t, int32_t task) {
    if (t.row_names.empty()) return;
    SQLite::Statement q(store_.db(), "SELECT iteration, start_ns, end_ns FROM iteration WHERE trace_id = ? ORDER BY iteration");
    q.bind(1, t.view.trace_id);
    while (q.executeStep()) {
      int64_t start = job_ns(t, q.getColumn(1).getInt64());
      spans_[{task, 1, kPrvIteration}].push_back(
          Span{start, job_ns(t, q.getColumn(2).getInt64()), q.getColumn(0).getInt64() + 1, q.getColumn(0).getInt64()});
    }
  }

  // Each finding its own event type (they overlap in time), on its rank's first row: 1 over the
  // iterations or window it covers (the Chrome trace's finding slices, on the same clock).
  void finding_events() {
    std::vector<RankView> views;
    for (const auto& t : tasks_) views.push_back(t.view);
    FindingPlacer placer(store_, views);
    int64_t position = 0;
    for (const auto& f : findings_) {
      if (++position > kPrvMaxFindings) break;
      auto place = placer.place(f);
      if (!place || tasks_[place->rank_index].row_names.empty()) continue;
      int32_t task = static_cast<int32_t>(place->rank_index) + 1;
      spans_[{task, 1, kPrvFinding + position}].push_back(
          Span{place->start_ns, std::max(place->end_ns, place->start_ns), 1, position});
      finding_labels_.push_back({kPrvFinding + position,
                                 fmt::format("proflint finding {}: {} [{}]", position, f.id, severity_name(f.effective_severity)),
                                 fmt::format("{} (estimated saving {})", f.title, format_ns(f.estimated_savings_ns))});
    }
  }

  // Ranges nest on a thread: a range's begin shows its value, its end shows the value of the range
  // it is inside again (0 at the top level), so Paraver shows the innermost range at every time.
  void nest_spans() {
    for (auto& [key, spans] : spans_) {
      auto [task, thread, type] = key;
      std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
        if (a.start != b.start) return a.start < b.start;
        if (a.end != b.end) return a.end > b.end;
        return a.id < b.id;
      });
      std::vector<const Span*> stack;
      for (const auto& s : spans) {
        while (!stack.empty() && stack.back()->end <= s.start) stack.pop_back();
        int64_t parent_value = 0;
        // The enclosing range is the nearest one on the stack that outlasts this one.
        while (!stack.empty() && stack.back()->end < s.end) stack.pop_back();
        if (!stack.empty()) parent_value = stack.back()->value;
        int32_t depth = static_cast<int32_t>(stack.size());
        Record b;
        b.time = s.start;
        b.task = task;
        b.thread = thread;
        b.type1 = type;
        b.v1 = s.value;
        b.order = 2'000'000 + depth;
        records_.push_back(b);
        Record e = b;
        e.time = s.end;
        e.v1 = parent_value;
        e.order = 1'000'000 - depth;
        records_.push_back(e);
        stack.push_back(&s);
      }
    }
  }

  // Paraver states of one thread must not overlap: a state starting inside the previous one starts
  // where that one ends (and is dropped when nothing is left).
  void clip_states() {
    std::vector<size_t> idx;
    for (size_t i = 0; i < records_.size(); ++i)
      if (records_[i].kind == Record::state) idx.push_back(i);
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      const Record &x = records_[a], &y = records_[b];
      if (x.task != y.task) return x.task < y.task;
      if (x.thread != y.thread) return x.thread < y.thread;
      return x.time < y.time;
    });
    int32_t task = -1, thread = -1;
    int64_t last_end = INT64_MIN;
    std::vector<bool> drop(records_.size(), false);
    for (size_t i : idx) {
      Record& r = records_[i];
      if (r.task != task || r.thread != thread) {
        task = r.task;
        thread = r.thread;
        last_end = INT64_MIN;
      }
      if (r.time < last_end) r.time = last_end;
      if (r.end <= r.time) {
        drop[i] = true;
        continue;
      }
      last_end = r.end;
    }
    size_t w = 0;
    for (size_t i = 0; i < records_.size(); ++i)
      if (!drop[i]) records_[w++] = records_[i];
    records_.resize(w);
  }

  void write_prv(std::ostream& out, int64_t t0, int64_t duration) {
    std::string buf;
    // The date is fixed: proflint output carries no wall-clock time (STYLE.md, "Output").
    buf += "#Paraver (01/01/1970 at 00:00):" + std::to_string(duration) + "_ns:0:1:" + std::to_string(tasks_.size()) + "(";
    for (size_t i = 0; i < tasks_.size(); ++i)
      buf += (i ? "," : "") + std::to_string(std::max<size_t>(tasks_[i].row_names.size(), 1)) + ":1";
    buf += ")\n";
    char line[256];
    for (const auto& r : records_) {
      int n = 0;
      long long t = r.time - t0;
      if (r.kind == Record::state) {
        n = std::snprintf(line, sizeof line, "1:0:1:%d:%d:%lld:%lld:%lld\n", r.task, r.thread, t,
                          static_cast<long long>(r.end - t0), static_cast<long long>(r.v1));
      } else if (r.kind == Record::comm) {
        long long recv = r.end - t0;
        n = std::snprintf(line, sizeof line, "3:0:1:%d:%d:%lld:%lld:0:1:%d:%d:%lld:%lld:%lld:%lld\n", r.task, r.thread, t, t,
                          r.task2, r.thread2, recv, recv, static_cast<long long>(r.v1), static_cast<long long>(r.type1));
      } else if (r.type2) {
        n = std::snprintf(line, sizeof line, "2:0:1:%d:%d:%lld:%lld:%lld:%lld:%lld\n", r.task, r.thread, t,
                          static_cast<long long>(r.type1), static_cast<long long>(r.v1), static_cast<long long>(r.type2),
                          static_cast<long long>(r.v2));
      } else {
        n = std::snprintf(line, sizeof line, "2:0:1:%d:%d:%lld:%lld:%lld\n", r.task, r.thread, t,
                          static_cast<long long>(r.type1), static_cast<long long>(r.v1));
      }
      buf.append(line, static_cast<size_t>(n));
      if (buf.size() >= (1u << 20)) {
        out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
        buf.clear();
      }
    }
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  }

  static void value_block(std::string& out, int64_t type, const char* label, const std::vector<std::string>& names) {
    out += "EVENT_TYPE\n0 " + std::to_string(type) + " " + label + "\nVALUES\n0 End\n";
    for (size_t i = 0; i < names.size(); ++i) out += std::to_string(i + 1) + " " + one_line(names[i]) + "\n";
    out += "\n\n";
  }

  void write_pcf(std::ostream& out) {
    std::string s =
        "DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\nLOOK_BACK           100\n"
        "SPEED               1\nFLAG_ICONS          ENABLED\nNUM_OF_STATE_COLORS 1000\nYMAX_SCALE          37\n\n\n"
        "DEFAULT_SEMANTIC\n\nTHREAD_FUNC          State As Is\n\n\n"
        "STATES\n0    Idle\n1    Kernel\n2    Memory copy\n3    Memset\n4    Runtime API call\n5    Synchronization\n\n\n"
        "STATES_COLOR\n0    {117,195,255}\n1    {0,0,255}\n2    {255,0,0}\n3    {255,174,185}\n4    {179,0,0}\n"
        "5    {0,255,0}\n\n\n";
    value_block(s, kPrvApiCall, "CUDA library call", api_names_.names());
    value_block(s, kPrvGpuActivity, "CUDA kernel", gpu_names_.names());
    s += "EVENT_TYPE\n0 " + std::to_string(kPrvCopySize) + " Memcopy size\n0 " + std::to_string(kPrvCorrelation) +
         " Correlation ID\n\n\n";
    static const std::pair<int64_t, const char*> range_types[] = {
        {kPrvNvtx, "NVTX pushpop ranges"},        {kPrvFrameworkOp, "Framework op"},
        {kPrvAnnotation, "User annotation"},      {kPrvPython, "Python function"},
        {kPrvGpuAnnotation, "GPU user annotation"}, {kPrvOtherRange, "Other host range"}};
    for (const auto& [type, label] : range_types) {
      auto it = range_names_.find(type);
      if (it != range_names_.end()) value_block(s, type, label, it->second.names());
    }
    s += "EVENT_TYPE\n0 " + std::to_string(kPrvIteration) + " Iteration (ordinal + 1)\n\n\n";
    for (const auto& [type, label, value] : finding_labels_)
      s += "EVENT_TYPE\n0 " + std::to_string(type) + " " + one_line(label) + "\nVALUES\n0 End\n1 " + one_line(value) + "\n\n\n";
    out.write(s.data(), static_cast<std::streamsize>(s.size()));
  }

  void write_row(std::ostream& out) {
    std::string s = "LEVEL NODE SIZE 1\nnode1\n\n";
    s += "LEVEL TASK SIZE " + std::to_string(tasks_.size()) + "\n";
    for (const auto& t : tasks_) s += one_line(t.view.label) + "\n";
    size_t threads = 0;
    for (const auto& t : tasks_) threads += std::max<size_t>(t.row_names.size(), 1);
    s += "\nLEVEL THREAD SIZE " + std::to_string(threads) + "\n";
    for (const auto& t : tasks_) {
      if (t.row_names.empty()) s += "R" + std::to_string(t.view.rank) + " (no events)\n";
      for (const auto& n : t.row_names) s += n + "\n";
    }
    out.write(s.data(), static_cast<std::streamsize>(s.size()));
  }

  Store& store_;
  const std::vector<Finding>& findings_;
  std::vector<std::tuple<int64_t, std::string, std::string>> finding_labels_;  // event type, label, value name
  std::vector<Task> tasks_;
  std::vector<Record> records_;
  std::map<std::tuple<int32_t, int32_t, int64_t>, std::vector<Span>> spans_;
  ValueTable api_names_, gpu_names_;
  std::map<int64_t, ValueTable> range_names_;
};

}  // namespace

ParaverExportStats write_paraver(Store& store, const std::vector<Finding>& findings, std::ostream& prv, std::ostream& pcf,
                                 std::ostream& row) {
  store.create_report_indexes();
  return ParaverExporter(store, findings).run(prv, pcf, row);
}

}  // namespace proflint::exporter
